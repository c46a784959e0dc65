"""The topology's plan without starting it: processes, addresses, environments, secrets, growth fits."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bench.growth import Curve, log_log_slope, order_of, svg
from dkg import cluster
from dkg.settings import load_settings


def _settings(tmp_path: Path, **kw: object):  # type: ignore[no-untyped-def]
    return load_settings(state_dir=tmp_path / "state", cluster_dir=tmp_path / "cluster", **kw)


def test_the_topology_is_every_process_of_the_issue_in_start_order(tmp_path: Path) -> None:
    s = _settings(tmp_path, cluster_workers=3, cluster_dask_workers=2, cluster_api_port=4311, cluster_dask_port=8811)
    names = [p.name for p in cluster.parts(s)]
    assert names == ["postgres", "prefect-server", "prefect-worker-1", "prefect-worker-2", "prefect-worker-3",
                     "dask-scheduler", "dask-worker-1", "dask-worker-2"]
    by = {p.name: p for p in cluster.parts(s)}
    assert by["prefect-server"].cmd[1:4] == ["server", "start", "--host"]
    assert "--pool" in by["prefect-worker-2"].cmd and "dkg-local" in by["prefect-worker-2"].cmd
    assert by["dask-scheduler"].cmd[1] == "scheduler" and by["dask-worker-1"].cmd[1:3] == ["worker", "tcp://127.0.0.1:8811"]
    # the markers tell our processes apart (a PID alone may be reused)
    assert len({p.marker for p in cluster.parts(s)}) == len(names)
    # workers and Dask workers reach the cluster's API, Dask and the shared result storage
    env = by["prefect-worker-1"].env
    assert env["PREFECT_API_URL"] == "http://127.0.0.1:4311/api"
    assert env["DKG_DASK_ADDRESS"] == "tcp://127.0.0.1:8811"
    assert env["PREFECT_LOCAL_STORAGE_PATH"] == str(cluster.layout(s).results)
    assert by["dask-worker-2"].env["PREFECT_API_URL"] == env["PREFECT_API_URL"]
    no_dask = _settings(tmp_path, cluster_dask_workers=0)
    assert "DKG_DASK_ADDRESS" not in cluster.client_env(no_dask)
    assert not [p for p in cluster.parts(no_dask) if p.name.startswith("dask")]


def test_only_the_server_holds_the_database_password_and_nothing_shows_it(tmp_path: Path) -> None:
    s = _settings(tmp_path)
    shown = cluster.database_url(s)
    real = cluster.database_url(s, masked=False)
    assert "***" in shown and "***" not in real and real != shown
    secret = cluster.layout(s).secret
    assert oct(secret.stat().st_mode & 0o777) == "0o600"
    password = secret.read_text().strip()
    assert password in real and password not in shown
    by = {p.name: p for p in cluster.parts(s)}
    assert by["prefect-server"].env["PREFECT_API_DATABASE_CONNECTION_URL"] == real
    for name, part in by.items():
        if name != "prefect-server":
            assert not any(password in v for v in part.env.values()), name
            assert password not in " ".join(part.cmd), name


def test_postgres_runs_as_the_postgres_user_only_when_we_are_root(tmp_path: Path) -> None:
    s = _settings(tmp_path)
    lay = cluster.layout(s)
    pg = cluster.parts(s)[0]
    if os.geteuid() == 0:
        assert pg.cmd[:2] == ["setpriv", "--reuid=postgres"]
        assert str(lay.pg_data).startswith("/var/lib/dkg-cluster/")
    else:
        assert pg.cmd[0].endswith("/postgres")
        assert lay.pg_data == lay.base / "pgdata"
    assert "listen_addresses=127.0.0.1" in pg.cmd


def test_status_of_a_cluster_that_is_not_up_lists_every_process_as_down(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from dkg_cli.main import app

    for k, v in {"DKG_STATE_DIR": str(tmp_path / "state"), "DKG_CLUSTER_DIR": str(tmp_path / "cluster"),
                 "DKG_NEO4J_PORT": "1", "DKG_CORENLP_PORT": "2", "DKG_CLUSTER_API_PORT": "3",
                 "DKG_CLUSTER_PG_PORT": "4", "DKG_CLUSTER_DASK_PORT": "5"}.items():
        monkeypatch.setenv(k, v)
    result = CliRunner().invoke(app, ["cluster", "status", "--json"])
    assert result.exit_code == 1, result.output
    rows = json.loads(result.output.strip().splitlines()[-1])
    assert [r["name"] for r in rows][:4] == ["neo4j", "corenlp", "postgres", "prefect-server"]
    assert not any(r["healthy"] for r in rows)
    assert all(r["detail"] == "not running" for r in rows[2:])


def test_growth_fits_name_the_order_of_a_curve(tmp_path: Path) -> None:
    xs = [1, 10, 100, 1000]
    assert order_of(log_log_slope(xs, [5, 5.2, 5.1, 5.3])) == "constant"
    assert order_of(log_log_slope(xs, [2 * x for x in xs])) == "linear"
    big = [10, 100, 1000, 10_000]
    assert order_of(log_log_slope(big, [x * math.log(x) for x in big])) == "n log n"
    assert order_of(log_log_slope(xs, [x * x for x in xs])) == "quadratic"
    c = Curve("quad", "n", "s")
    for x in xs:
        c.add(x, 0.5 * x * x)
    out = svg([c], tmp_path / "g.svg", "test")
    text = out.read_text()
    assert text.startswith("<svg") and "b=2.00 quadratic" in text
