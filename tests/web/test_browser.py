"""The web UI in headless Chromium against the real service (issue 7.7).

Debian's ``chromium`` (``/usr/bin/chromium``) is driven by Playwright for Python; no browser is
downloaded. Without that binary, or without the ``playwright`` package, every test here is
skipped with the reason. The service (``heraldbench.api.main.create_app``) runs under uvicorn in
a subprocess with a temporary SQLite database, MLflow store and its own LocalCluster, and a bearer
token, so the flows also cover the token dialog and a 401.

Screenshots land in the test's tmp folder, or in ``$HERALDBENCH_WEB_SCREENSHOTS`` when set.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.web.server import RunningApp, running_app

CHROMIUM = Path(os.environ.get("HERALDBENCH_CHROMIUM", "/usr/bin/chromium"))
LAUNCH_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip
TOKEN = "browser-test-token"
RUN_TIMEOUT_MS = 180_000

if not CHROMIUM.exists():
    pytest.skip(f"{CHROMIUM} is absent (apt-get install chromium)", allow_module_level=True)
sync_api = pytest.importorskip(
    "playwright.sync_api", reason="playwright is not installed (pip install -e '.[dev]')"
)


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningApp]:
    with running_app(tmp_path_factory.mktemp("web-app"), token=TOKEN) as running:
        yield running


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    folder = Path(os.environ.get("HERALDBENCH_WEB_SCREENSHOTS") or tmp_path / "screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


class Watched:
    """A page, with the requests that left the app's origin and the script errors it raised."""

    def __init__(self, page: Any, origin: str) -> None:
        self.page = page
        self.external: list[str] = []
        self.errors: list[str] = []
        page.on("request", self._request)
        page.on("pageerror", lambda exc: self.errors.append(str(exc)))
        self.origin = origin

    def _request(self, request: Any) -> None:
        url = request.url
        if not (url.startswith((self.origin + "/", "data:")) or url == self.origin):
            self.external.append(url)

    def check_clean(self) -> None:
        assert self.external == [], f"requests outside the app: {self.external}"
        assert self.errors == [], f"script errors: {self.errors}"


@pytest.fixture
def page(browser: Any, app: RunningApp) -> Iterator[Watched]:
    context = browser.new_context(viewport={"width": 1400, "height": 950})
    watched = Watched(context.new_page(), app.url)
    watched.page.set_default_timeout(30_000)
    yield watched
    context.close()


def tiny(spec_text: str) -> str:
    """The preset's spec shrunk to a trace that simulates in about a second."""
    text = re.sub(r"samples: \d+", "samples: 20000", spec_text)
    text = re.sub(r"scale: [\d.e-]+", "scale: 0.002", text)
    text = re.sub(r"workers: \d+", "workers: 4", text)
    text = re.sub(r"batch_size: \d+", "batch_size: 32", text)
    return re.sub(r"name: \S+", "name: ui-herald-table1", text, count=1)


def numbers(cells: list[str]) -> list[float]:
    return [float(c) for c in cells]


def test_submit_the_herald_preset_and_see_its_results(
    app: RunningApp, page: Watched, shots: Path
) -> None:
    p = page.page
    p.goto(f"{app.url}/#/new")
    p.get_by_test_id("preset-herald-table1").click()
    editor = p.get_by_test_id("spec-editor")
    assert "herald-sync-only" in editor.input_value()
    editor.fill(tiny(editor.input_value()))
    p.screenshot(path=str(shots / "new-experiment.png"), full_page=True)

    # The service wants a token: the first submission is refused, and the UI says so.
    p.get_by_test_id("submit").click()
    refusal = p.locator(".alert-error", has_text="Not authorised (HTTP 401)").first
    refusal.wait_for()
    p.screenshot(path=str(shots / "unauthorised.png"), full_page=True)
    refusal.get_by_role("button", name="Enter API token").click()
    p.locator("#token-input").fill(TOKEN)
    p.locator("#token-save").click()
    assert p.locator("#token-button").inner_text().strip().endswith("Token set")

    p.get_by_test_id("submit").click()
    p.wait_for_url(re.compile(r".*#/experiments/\d+$"))
    experiment_id = int(p.url.rsplit("/", 1)[1])
    status = p.get_by_test_id("experiment-status")
    try:
        p.wait_for_selector(
            "[data-testid='experiment-status'][data-status='succeeded']", timeout=RUN_TIMEOUT_MS
        )
    except sync_api.TimeoutError:
        p.screenshot(path=str(shots / "experiment-timeout.png"), full_page=True)
        raise AssertionError(
            f"status {status.get_attribute('data-status')!r}; server log:\n{app.log_tail()}"
        ) from None
    p.get_by_test_id("relative-chart").locator("svg rect.bar").first.wait_for()
    p.screenshot(path=str(shots / "experiment.png"), full_page=True)

    table = p.get_by_test_id("comparison-table")
    kinds = table.locator("tbody tr[data-kind]").evaluate_all(
        "rows => rows.map(r => r.dataset.kind)"
    )
    assert kinds == ["naive", "herald", "herald-sync-only", "herald-partition-only"]
    naive = numbers(table.locator("tr[data-kind='naive'] td.rel").all_inner_texts())
    herald = numbers(table.locator("tr[data-kind='herald'] td.rel").all_inner_texts())
    assert naive == [1.0, 1.0, 1.0]  # relative pull, push, overall
    assert len(herald) == 3 and all(0 < v < 1.5 for v in herald) and herald[2] < 1.0
    counts = table.locator("tr[data-kind='herald'] td.num").all_inner_texts()
    assert any(re.search(r"\d", c) for c in counts[3:6]), counts  # absolute pull/push/overall rows

    bars = p.get_by_test_id("relative-chart").locator("svg rect.bar")
    assert bars.count() == 4 * 3  # a group per scheduler, a bar per metric
    assert (
        p.get_by_test_id("relative-chart").locator("svg g.marker").count() == 3
    )  # Herald's published values
    assert p.get_by_test_id("series-chart").locator("svg path.line").count() == 4
    mlflow = p.get_by_test_id("experiment-mlflow")
    assert re.search(r"/#/experiments/\d+/runs/\w+", mlflow.get_attribute("href") or "")

    p.get_by_test_id("series-chart").get_by_role("button", name="Cumulative").click()
    assert p.get_by_test_id("series-chart").locator("svg path.line").count() == 4

    p.goto(f"{app.url}/#/experiments")
    row = p.locator(f"[data-testid='experiments-table'] tr[data-id='{experiment_id}']")
    row.wait_for()
    assert "ui-herald-table1" in row.inner_text()
    assert row.locator("[data-status='succeeded']").count() == 1
    p.screenshot(path=str(shots / "experiments.png"), full_page=True)
    page.check_clean()


def test_a_bad_spec_shows_each_error_at_its_field(
    app: RunningApp, page: Watched, shots: Path
) -> None:
    p = page.page
    # validating reads the files a spec names, as submitting does: the token is needed
    p.add_init_script(f"localStorage.setItem('heraldbench.token', {TOKEN!r})")
    p.goto(f"{app.url}/#/new")
    editor = p.get_by_test_id("spec-editor")
    p.get_by_test_id("preset-herald-table1").wait_for()
    editor.fill(
        "name: broken\n"
        "dataset: {kind: synthetic-criteo, samples: 20000, scale: 0.002}\n"
        "cluster: {workers: 0, batch_size: 32}\n"
        "schedulers:\n"
        "  - {kind: naive}\n"
        "  - {kind: herald, lookahead: 0}\n"
    )
    p.get_by_test_id("validate").click()
    errors = p.get_by_test_id("validation-errors")
    errors.wait_for()
    fields = errors.get_by_test_id("error-field").all_inner_texts()
    assert "cluster.workers" in fields
    assert any(f.startswith("schedulers.1") and f.endswith("lookahead") for f in fields), fields
    assert "greater than or equal to 1" in errors.inner_text()
    # each error marks its line in the editor's gutter (lines 3 and 6)
    marked = p.locator(".editor-gutter .has-error").all_inner_texts()
    assert marked == ["3", "6"], marked
    p.screenshot(path=str(shots / "validation-errors.png"), full_page=True)

    # jumping to an error selects the field in the editor
    errors.locator("button.error-jump", has_text="cluster.workers").click()
    selected = editor.evaluate("t => t.value.slice(t.selectionStart, t.selectionEnd)")
    assert selected == "workers"

    editor.fill("name: [unclosed\n")
    p.get_by_test_id("validate").click()
    assert "Syntax error" in p.get_by_test_id("validation-result").inner_text()

    editor.fill(
        tiny(
            "name: fixed\ndataset: {kind: synthetic-criteo, samples: 1, scale: 1}\n"
            "schedulers:\n  - {kind: herald}\n"
        )
    )
    p.get_by_test_id("validate").click()
    ok = p.get_by_test_id("validation-ok")
    ok.wait_for()
    assert "2 runs" in ok.inner_text()  # herald plus the naive baseline the service adds
    page.check_clean()


def _api(app: RunningApp, method: str, path: str, body: Any = None) -> Any:
    import json
    import urllib.request

    request = urllib.request.Request(
        f"{app.url}{path}", method=method, data=json.dumps(body).encode() if body else None,
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {TOKEN}"},
    )  # fmt: skip
    with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310 - loopback
        return json.load(response)


def test_preset_cards_list_every_scheduler_and_the_table_shows_all_reduce(
    app: RunningApp, page: Watched, shots: Path
) -> None:
    from heraldbench.platform.schedulers import registered

    p = page.page
    p.goto(f"{app.url}/#/new")
    card = p.get_by_test_id("preset-every-scheduler")
    card.wait_for()
    assert card.locator(".chip").count() == len(registered())

    spec = {"name": "ui-allreduce", "dataset": {"kind": "synthetic-criteo", "samples": 20000,
            "scale": 0.002, "seed": 1}, "cluster": {"workers": 4, "batch_size": 32},
            "schedulers": [{"kind": "naive"}, {"kind": "fae", "hot_ratio": 0.1},
                           {"kind": "bagpipe"}]}  # fmt: skip
    experiment_id = _api(app, "POST", "/api/experiments", spec)["id"]
    p.goto(f"{app.url}/#/experiments/{experiment_id}")
    p.wait_for_selector(
        "[data-testid='experiment-status'][data-status='succeeded']", timeout=RUN_TIMEOUT_MS
    )
    table = p.get_by_test_id("comparison-table")
    assert table.get_by_test_id("allreduce-head").count() == 1
    fae = table.locator("tr[data-kind='fae'] [data-testid='allreduce-cell']").inner_text()
    assert re.search(r"[1-9]", fae), fae
    p.screenshot(path=str(shots / "allreduce.png"), full_page=True)

    # BagPipe's first spike: clipped by default, the whole range without clipping.
    chart = p.get_by_test_id("series-chart")
    top_tick = "els => Math.max(...els.map(e => parseFloat(e.textContent.replace(/[^0-9.]/g, ''))" \
        " * (/k/i.test(e.textContent) ? 1e3 : /M/.test(e.textContent) ? 1e6 : 1)))"
    ticks = "svg text.tick[text-anchor='end']"
    clipped = chart.locator(ticks).evaluate_all(top_tick)
    chart.get_by_test_id("series-clip").uncheck()
    whole = chart.locator(ticks).evaluate_all(top_tick)
    assert clipped < whole, (clipped, whole)
    with p.expect_download() as download:
        p.get_by_test_id("experiment-download").click()
    import zipfile

    names = zipfile.ZipFile(download.value.path()).namelist()
    assert {"results.json", "report/table1.md", "report/comparison.csv"} <= set(names), names
    page.check_clean()


def test_placements_are_rows_of_the_comparison_table(app: RunningApp, page: Watched) -> None:
    spec = {"name": "ui-placements", "dataset": {
                "kind": "synthetic", "profile": "movielens-100k", "samples": 20000, "scale": 1.0,
                "features": {"multi_hot": {"sizes": {"item": 2}, "lengths": "uniform"},
                             "sequence": {"user": "user", "item": "item", "length": 5,
                                          "min_length": 1}}},
            "cluster": {"workers": 4, "batch_size": 32, "hosts": 2}, "cache": {"ratio": 0.5},
            "schedulers": [{"kind": "naive"}, {"kind": "herald"}],
            "placements": [{"kind": "row-wise"}, {"kind": "flexshard", "memory_headroom": 0.5}],
            "baseline": "row-wise"}  # fmt: skip
    experiment_id = _api(app, "POST", "/api/experiments", spec)["id"]
    p = page.page
    p.goto(f"{app.url}/#/experiments/{experiment_id}")
    p.wait_for_selector(
        "[data-testid='experiment-status'][data-status='succeeded']", timeout=RUN_TIMEOUT_MS
    )
    table = p.get_by_test_id("comparison-table")
    assert "row-wise" in table.get_by_test_id("side-bytes-head").inner_text().lower()  # CSS caps
    for kind in ("naive", "herald", "row-wise", "flexshard"):
        assert table.locator(f"tr[data-kind='{kind}']").count() == 1, kind
    assert table.locator("tr[data-kind='row-wise'] [data-testid='side-bytes']").inner_text() \
        == "1.00×"
    herald = table.locator("tr[data-kind='herald'] [data-testid='side-intra']").inner_text()
    assert herald == "0.000"  # a parameter server's traffic is all inter-host
    page.check_clean()


def test_the_being_prepared_notice_gives_way_once_the_dataset_failed(
    app: RunningApp, page: Watched, shots: Path
) -> None:
    fixture = Path(__file__).resolve().parents[1] / "platform/data/fixtures/criteo_malformed.tsv"
    (app.log.parent / "data" / "broken.tsv").write_bytes(fixture.read_bytes())
    p = page.page
    p.goto(f"{app.url}/#/datasets")
    p.locator("#token-button").click()
    p.locator("#token-input").fill(TOKEN)
    p.locator("#token-save").click()
    p.locator("#ds-name").fill("broken")
    p.locator("#ds-kind").select_option("criteo-tsv")
    p.locator("#ds-path").fill("broken.tsv")
    p.locator("#ds-path").press("Enter")
    p.get_by_test_id("dataset-pending").wait_for()
    p.get_by_test_id("dataset-failed").wait_for(timeout=RUN_TIMEOUT_MS)
    assert p.get_by_test_id("dataset-pending").count() == 0
    p.screenshot(path=str(shots / "dataset-failed.png"), full_page=True)
    page.check_clean()


def test_the_experiments_page_says_where_command_line_runs_are(
    app: RunningApp, page: Watched
) -> None:
    p = page.page
    p.goto(f"{app.url}/#/experiments")
    note = p.get_by_test_id("cli-note")
    note.wait_for()
    assert str(app.log.parent / "home") in note.inner_text()
    assert "heraldbench run" in note.inner_text()
    page.check_clean()


def test_a_study_starts_from_the_tuning_preset(app: RunningApp, page: Watched) -> None:
    p = page.page
    p.goto(f"{app.url}/#/new")
    p.get_by_test_id("preset-tune-herald").click()
    editor = p.get_by_test_id("spec-editor")
    assert "tuning:" in editor.input_value()
    # a study is admitted at the ends of its space: at this trace's size the preset's smallest
    # cache (1% of the rows) cannot hold one worker's batch, so the shrunk study starts at 5%
    shrunk = re.sub(r"low: 0\.01\b", "low: 0.05", tiny(editor.input_value()))
    editor.fill(re.sub(r"trials: \d+", "trials: 2", shrunk))
    p.locator("#token-button").click()
    p.locator("#token-input").fill(TOKEN)
    p.locator("#token-save").click()
    p.get_by_test_id("submit").click()
    p.wait_for_url(re.compile(r".*#/studies/\d+$"))
    study_id = int(p.url.rsplit("/", 1)[1])
    p.get_by_test_id("study-page").wait_for()
    deadline = time.monotonic() + RUN_TIMEOUT_MS / 1000
    while _api(app, "GET", f"/api/studies/{study_id}")["status"] not in ("succeeded", "failed"):
        assert time.monotonic() < deadline, app.log_tail()
        time.sleep(0.5)
    study = _api(app, "GET", f"/api/studies/{study_id}")
    assert study["status"] == "succeeded", study["error"]
    assert len(study["trials"]) == 2
    p.reload()
    table = p.get_by_test_id("trials-table")
    table.wait_for()
    headers = [t.lower() for t in table.locator("thead th").all_inner_texts()]  # CSS upper-cases
    assert "traffic (minimize)" in headers and "cache_memory (minimize)" in headers, headers
    assert "cache_memory <= 64MiB" in p.get_by_test_id("study-caps").inner_text()
    ticks = p.get_by_test_id("study-page").locator("svg text.tick").evaluate_all(
        "els => els.map(e => e.textContent)"
    )
    assert ticks and not any(t.strip().startswith(("-", "−")) for t in ticks), ticks
    starts = p.get_by_test_id("study-page").locator("svg[data-y0]").evaluate_all(
        "els => els.map(e => [Number(e.dataset.x0), Number(e.dataset.y0)])"
    )
    assert starts and all(x0 >= 0 and y0 >= 0 for x0, y0 in starts), starts  # no axis below 0
    study_link = p.get_by_test_id("study-mlflow")
    assert study["mlflow_url"] and study_link.get_attribute("href") == study["mlflow_url"]
    links = p.get_by_test_id("trial-mlflow")  # one per trial row, in trial order
    expected = [t["mlflow_run_url"] for t in sorted(study["trials"], key=lambda t: t["number"])]
    assert all(expected) and [links.nth(i).get_attribute("href") for i in range(links.count())] == (
        expected
    )
    infeasible = sum(not t["feasible"] for t in study["trials"])
    assert p.get_by_test_id("breaks-cap").count() == infeasible
    page.check_clean()


def test_scatter_axes_of_non_negative_values_do_not_go_below_0(
    app: RunningApp, page: Watched
) -> None:
    """Values near 0 (a trial numbered 0, a small traffic) would pad the axes below 0."""
    p = page.page
    p.goto(f"{app.url}/#/studies")
    p.wait_for_load_state("networkidle")
    starts, ticks = p.evaluate(
        """async () => {
          const { scatterChart } = await import("/js/charts.js");
          const points = [0, 1, 2, 3, 4, 5].map((i) => ({ x: i, y: [1, 100, 40, 3, 80, 60][i] }));
          const chart = scatterChart({ points, title: "t", step: points.map((q) => [q.x, q.y]) });
          chart.style.width = "600px";
          document.body.append(chart);
          await new Promise((done) => setTimeout(done, 300));
          const svg = chart.querySelector("svg");
          return [[Number(svg.dataset.x0), Number(svg.dataset.y0)],
                  [...svg.querySelectorAll("text.tick")].map((t) => t.textContent)];
        }"""
    )
    assert starts[0] >= 0 and starts[1] >= 0, starts
    assert ticks and not any(t.strip().startswith(("-", "−")) for t in ticks), ticks
