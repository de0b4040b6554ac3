"""One declaration per tunable (tunables.py): Settings, the graph's Configuration, the /rag
validation, the search parameters and the configuration docs all agree with it."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

import tunables
from api.routes.rag import checked_configurable, served_config
from graph.configuration import Configuration
from settings import Settings
from storage.search import SearchParams
from tunables import ServerTunables, Tunables

ALL = {**Tunables.model_fields, **ServerTunables.model_fields}


def test_settings_and_configuration_carry_every_tunable_with_its_default() -> None:
    for name, info in ALL.items():
        assert Settings.model_fields[name].default == info.default, name
        assert Configuration.model_fields[name].default == info.default, name


def test_environment_variable_is_the_declared_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRAPH_TOP_K", "7")
    monkeypatch.setenv("SEARCH_MODE", "sparse")
    monkeypatch.setenv("HEADING_WEIGHT", "0")
    s = Settings(_env_file=None)
    assert (s.top_k, s.mode, s.heading_weight) == (7, "sparse", 0.0)
    monkeypatch.setenv("GRAPH_TOP_K", "99")  # out of the declared bounds
    with pytest.raises(ValueError, match="top_k"):
        Settings(_env_file=None)


def test_search_parameters_take_the_declared_retrieval_tunables() -> None:
    shared = [f for f in dataclasses.fields(SearchParams) if f.name in Tunables.model_fields]
    assert {f.name for f in shared} == {"mode", "fusion", "dense_weight", "sparse_weight", "heading_weight", "rrf_k",
                                        "dense_rrf_k",
                                        "candidates", "max_df", "scope_from_question"}
    for f in shared:
        assert f.default == Tunables.model_fields[f.name].default, f.name
    cfg = Configuration(dense_weight=0.3, mode="dense")
    params = SearchParams.from_tunables(cfg, k=4)
    assert (params.k, params.dense_weight, params.mode) == (4, 0.3, "dense")


def test_rag_accepts_exactly_the_per_request_tunables_within_bounds() -> None:
    from fastapi import HTTPException

    assert checked_configurable({"top_k": 4}) == {"top_k": 4}
    for bad in ({"top_k": 0}, {"reranker": "none"}, {"owner_id": 1}, {"mode": "fuzzy"}):
        with pytest.raises(HTTPException) as err:
            checked_configurable(bad)
        assert err.value.status_code == 422
    schema = served_config(Settings(_env_file=None, top_k=4)).model_json_schema()
    text = json.dumps(schema)
    assert '"type": "null"' not in text  # the playground cannot render null branches
    props = schema["$defs"]["RagTunables"]["properties"]
    assert set(props) == set(Tunables.model_fields)
    assert props["top_k"]["default"] == 4 and props["top_k"]["maximum"] == 20


def test_configuration_docs_table_is_generated_from_the_declarations() -> None:
    doc = (Path(__file__).parents[2] / tunables.DOCS).read_text()
    assert tunables.with_table(doc) == doc, "run `python tunables.py` to regenerate docs/configuration.md"
    for info in ALL.values():
        assert f"`{info.json_schema_extra['env']}`" in doc
