"""Raw PDF storage: local disk by default; Supabase Storage through the real `supabase` client,
here against a local HTTP server that speaks the Storage API's object routes."""

from __future__ import annotations

from http.server import BaseHTTPRequestHandler

from pydantic import SecretStr

from api.files import LocalFiles, SupabaseFiles, make_file_store
from evals import local_http
from tests.server.conftest import signup, upload

# A syntactically valid service-role JWT (the client checks the shape, not the signature).
SERVICE_KEY = ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJyb2xlIjoic2VydmljZV9yb2xlIiwiaXNzIjoic3VwYWJhc2UifQ."
               "c2lnbmF0dXJlLXBsYWNlaG9sZGVyLWZvci10ZXN0cw")


class FakeStorage:
    """POST/GET /storage/v1/object/{bucket}/{path}, DELETE /storage/v1/object/{bucket} {"prefixes": [...]}."""

    def __init__(self) -> None:
        self.objects: dict[str, bytes] = {}
        self.auth: list[str] = []
        self.fail_uploads = False  # answer uploads with 500, like a storage outage
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # noqa: ANN002
                pass

            def _reply(self, status: int, body: bytes, ctype: str = "application/json") -> None:
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _key(self) -> str:
                return self.path.split("/storage/v1/object/", 1)[1].split("?", 1)[0]

            def do_POST(self) -> None:  # noqa: N802
                import email.parser

                outer.auth.append(self.headers.get("Authorization", ""))
                raw = self.rfile.read(int(self.headers["Content-Length"]))
                if outer.fail_uploads:
                    self._reply(500, b'{"statusCode": "500", "error": "internal", "message": "storage down"}')
                    return
                msg = email.parser.BytesParser().parsebytes(
                    f"Content-Type: {self.headers['Content-Type']}\r\n\r\n".encode() + raw)
                for part in msg.walk():
                    if part.get_param("name", header="content-disposition") == "file":
                        outer.objects[self._key()] = part.get_payload(decode=True)
                self._reply(200, b'{"Key": "%s"}' % self._key().encode())

            def do_GET(self) -> None:  # noqa: N802
                data = outer.objects.get(self._key())
                if data is None:
                    self._reply(404, b'{"statusCode": "404", "error": "not_found", "message": "Object not found"}')
                else:
                    self._reply(200, data, "application/pdf")

            def do_DELETE(self) -> None:  # noqa: N802
                import json

                bucket = self._key()
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                for prefix in body["prefixes"]:
                    outer.objects.pop(f"{bucket}/{prefix}", None)
                self._reply(200, b"[]")

        self.server = local_http.serve(Handler)
        self.url = local_http.url(self.server)


def test_local_store_is_the_default(settings) -> None:  # noqa: ANN001
    assert type(make_file_store(settings)) is LocalFiles


def test_supabase_store_round_trip(settings, tmp_path) -> None:  # noqa: ANN001
    fake = FakeStorage()
    s = settings.model_copy(update={"thotqen_home": tmp_path, "supabase_url": fake.url,
                                    "supabase_service_key": SecretStr(SERVICE_KEY), "supabase_bucket": "pdfs"})
    store = make_file_store(s)
    assert isinstance(store, SupabaseFiles)
    path = store.path(7, "abc")
    path.parent.mkdir(parents=True)
    path.write_bytes(b"%PDF-1.7 data %%EOF")
    store.saved(7, "abc")  # upload: the bucket holds the durable copy
    assert fake.objects == {"pdfs/7/abc.pdf": b"%PDF-1.7 data %%EOF"}
    assert fake.auth[-1] == f"Bearer {SERVICE_KEY}"
    store.ingested(7, "abc")  # the local copy was only for parsing
    assert not path.exists()
    store.ensure_local(7, "abc")  # a worker (any process) fetches it back before ingesting
    assert path.read_bytes() == b"%PDF-1.7 data %%EOF"
    store.delete(7, "abc")
    assert fake.objects == {} and not path.exists()
    fake.server.shutdown()


def test_a_failed_storage_upload_answers_503_and_keeps_nothing(start_server, server_settings, report_pdf,
                                                                tmp_path) -> None:  # noqa: ANN001
    fake = FakeStorage()
    live = start_server(server_settings.model_copy(update={
        "thotqen_home": tmp_path, "supabase_url": fake.url, "supabase_service_key": SecretStr(SERVICE_KEY),
        "supabase_bucket": "pdfs"}))
    with live.client() as c:
        user = signup(c, "storage")
        fake.fail_uploads = True
        res = upload(c, user["headers"], "report.pdf", report_pdf)
        assert res.status_code == 503, res.text
        assert "nothing was kept" in res.json()["detail"] and res.headers["Retry-After"]
        assert c.get("/api/documents", headers=user["headers"]).json()["documents"] == []
        assert not list((tmp_path / "files").rglob("*.pdf"))
        fake.fail_uploads = False  # storage is back: the same file uploads as new, not as a half-kept duplicate
        res = upload(c, user["headers"], "report.pdf", report_pdf)
        assert res.status_code == 202 and res.json()["reused"] is False, res.text
        assert list(fake.objects.values()) == [report_pdf]
        fake.fail_uploads = True  # the same file again: it already has its durable copy, so nothing is undone
        again = upload(c, user["headers"], "report.pdf", report_pdf)
        assert again.status_code == 202 and again.json()["document_id"] == res.json()["document_id"], again.text
        assert [d["id"] for d in c.get("/api/documents", headers=user["headers"]).json()["documents"]] == \
            [res.json()["document_id"]]
    fake.server.shutdown()
