"""Concurrent submissions land exactly once (SQLite: WAL + immediate writers; PostgreSQL)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from tests.api.helpers import tiny_spec

SUBMISSIONS = 40


def test_concurrent_submissions_all_land_exactly_once(api) -> None:
    def post(index: int) -> tuple[str, int, int]:
        spec = tiny_spec(
            name=f"concurrent-{index}", schedulers=[{"kind": "naive"}], lower_bound=False
        )
        response = api.post("/api/experiments", json=spec)
        return f"concurrent-{index}", response.status_code, response.json().get("id", -1)

    with ThreadPoolExecutor(max_workers=SUBMISSIONS) as pool:
        results = list(pool.map(post, range(SUBMISSIONS)))
    assert all(status == 202 for _, status, _ in results), results
    ids = {experiment_id for _, _, experiment_id in results}
    assert len(ids) == SUBMISSIONS
    page = api.get("/api/experiments", params={"limit": 100}).json()
    assert page["count"] == SUBMISSIONS
    names = sorted(e["name"] for e in page["data"])
    assert names == sorted(name for name, _, _ in results)  # none lost, none duplicated
    assert {e["id"] for e in page["data"]} == ids
