"""Raw PDF storage: local disk by default; Supabase Storage through the real `supabase` client,
here against a local HTTP server that speaks the Storage API's object routes."""

from __future__ import annotations

from http.server import BaseHTTPRequestHandler

import httpx
from pydantic import SecretStr

from evals import local_http
from ingestion.files import LocalFiles, SupabaseFiles, make_file_store
from tests.server.conftest import signup, upload

# A syntactically valid service-role JWT (the client checks the shape, not the signature).
SERVICE_KEY = ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJyb2xlIjoic2VydmljZV9yb2xlIiwiaXNzIjoic3VwYWJhc2UifQ."
               "c2lnbmF0dXJlLXBsYWNlaG9sZGVyLWZvci10ZXN0cw")


class FakeStorage:
    """POST/GET /storage/v1/object/{bucket}/{path}, DELETE /storage/v1/object/{bucket} {"prefixes": [...]};
    signed URLs: POST /storage/v1/object/sign/{bucket}/{path} {"expiresIn", "download"} answers
    {"signedURL": "/object/sign/{bucket}/{path}?token=..."}, and GET on that URL the object, as an
    attachment under the `download` name."""

    def __init__(self) -> None:
        self.objects: dict[str, bytes] = {}
        self.auth: list[str] = []
        self.signed: dict[str, tuple[str, dict]] = {}  # token: (object key, the signing request's body)
        self.fail_uploads = False  # answer uploads with 500, like a storage outage
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def _reply(self, status: int, body: bytes, ctype: str = "application/json") -> None:
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _key(self) -> str:
                return self.path.split("/storage/v1/object/", 1)[1].split("?", 1)[0]

            def do_POST(self) -> None:
                import email.parser

                outer.auth.append(self.headers.get("Authorization", ""))
                raw = self.rfile.read(int(self.headers["Content-Length"]))
                if self._key().startswith("sign/"):
                    import json
                    import secrets

                    key = self._key().removeprefix("sign/")
                    if key not in outer.objects:
                        self._reply(400, b'{"statusCode": "404", "error": "not_found", "message": "Object not found"}')
                        return
                    token = secrets.token_urlsafe(16)
                    outer.signed[token] = (key, json.loads(raw))
                    self._reply(200, json.dumps({"signedURL": f"/object/sign/{key}?token={token}"}).encode())
                    return
                if outer.fail_uploads:
                    self._reply(500, b'{"statusCode": "500", "error": "internal", "message": "storage down"}')
                    return
                msg = email.parser.BytesParser().parsebytes(
                    f"Content-Type: {self.headers['Content-Type']}\r\n\r\n".encode() + raw)
                for part in msg.walk():
                    if part.get_param("name", header="content-disposition") == "file":
                        outer.objects[self._key()] = part.get_payload(decode=True)
                self._reply(200, b'{"Key": "%s"}' % self._key().encode())

            def do_GET(self) -> None:
                if self._key().startswith("sign/"):
                    from urllib.parse import parse_qs, urlsplit

                    query = parse_qs(urlsplit(self.path).query)
                    key, _body = outer.signed.get(query.get("token", [""])[0], ("", {}))
                    if key != self._key().removeprefix("sign/"):
                        self._reply(400, b'{"statusCode": "403", "error": "InvalidJWT", "message": "invalid"}')
                        return
                    self.send_response(200)
                    self.send_header("Content-Type", "application/pdf")
                    self.send_header("Content-Disposition", f'attachment; filename="{query["download"][0]}"')
                    self.send_header("Content-Length", str(len(outer.objects[key])))
                    self.end_headers()
                    self.wfile.write(outer.objects[key])
                    return
                data = outer.objects.get(self._key())
                if data is None:
                    self._reply(404, b'{"statusCode": "404", "error": "not_found", "message": "Object not found"}')
                else:
                    self._reply(200, data, "application/pdf")

            def do_DELETE(self) -> None:
                import json

                bucket = self._key()
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                for prefix in body["prefixes"]:
                    outer.objects.pop(f"{bucket}/{prefix}", None)
                self._reply(200, b"[]")

        self.server = local_http.serve(Handler)
        self.url = local_http.url(self.server)


def test_local_store_is_the_default(settings) -> None:
    assert type(make_file_store(settings)) is LocalFiles


def test_supabase_store_round_trip(settings, tmp_path) -> None:
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


def test_supabase_signed_url_is_short_lived_and_names_the_file(settings, tmp_path) -> None:
    from ingestion.files import SIGNED_URL_TTL_S

    fake = FakeStorage()
    s = settings.model_copy(update={"thotqen_home": tmp_path, "supabase_url": fake.url,
                                    "supabase_service_key": SecretStr(SERVICE_KEY), "supabase_bucket": "pdfs"})
    store = make_file_store(s)
    fake.objects["pdfs/7/abc.pdf"] = b"%PDF-1.7 signed %%EOF"
    url = store.signed_url(7, "abc", "pdf", "report.pdf")
    assert url.startswith(f"{fake.url}/storage/v1/object/sign/pdfs/7/abc.pdf?token=") and "download=report.pdf" in url
    [(key, body)] = fake.signed.values()
    assert key == "pdfs/7/abc.pdf" and body == {"expiresIn": str(SIGNED_URL_TTL_S), "download": "report.pdf"}
    assert fake.auth[-1] == f"Bearer {SERVICE_KEY}"
    assert SIGNED_URL_TTL_S <= 300  # short-lived
    got = httpx.get(url)
    assert got.content == b"%PDF-1.7 signed %%EOF" and 'filename="report.pdf"' in got.headers["content-disposition"]
    assert LocalFiles(s).signed_url(7, "abc", "pdf", "report.pdf") is None  # files on disk have none
    fake.server.shutdown()


def test_a_supabase_download_is_a_redirect_to_a_signed_url(own_server, server_settings, report_pdf,
                                                           tmp_path) -> None:
    fake = FakeStorage()
    live = own_server(server_settings.model_copy(update={
        "thotqen_home": tmp_path, "supabase_url": fake.url, "supabase_service_key": SecretStr(SERVICE_KEY),
        "supabase_bucket": "pdfs"}))
    with live.client() as c:
        owner, stranger = signup(c, "signed"), signup(c, "unsigned")
        res = upload(c, owner["headers"], "aurora report.pdf", report_pdf)
        assert res.status_code == 202, res.text
        path = f"/api/documents/{res.json()['document_id']}/file"
        answer = c.get(path, headers=owner["headers"])
        assert answer.status_code == 307 and answer.content == b""
        assert answer.headers["location"].startswith(f"{fake.url}/storage/v1/object/sign/pdfs/")
        assert answer.headers["cache-control"] == "private, no-store"
        got = httpx.get(answer.headers["location"])  # the client fetches the bytes from Storage itself
        assert got.content == report_pdf and 'filename="aurora report.pdf"' in got.headers["content-disposition"]
        theirs = c.get(path, headers=stranger["headers"])
        missing = c.get(path.replace(res.json()["document_id"], "00000000-0000-0000-0000-000000000000"),
                        headers=stranger["headers"])
        assert theirs.status_code == missing.status_code == 404 and theirs.json() == missing.json()
        assert len(fake.signed) == 1  # no URL was signed for the stranger
        local_http.stop(fake.server)
        down = c.get(path, headers=owner["headers"])  # Storage unreachable: said so, never a 500
        assert down.status_code == 503 and down.headers["retry-after"]


def test_a_failed_storage_upload_answers_503_and_keeps_nothing(own_server, server_settings, report_pdf,
                                                                tmp_path) -> None:
    fake = FakeStorage()
    live = own_server(server_settings.model_copy(update={
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
