"""The workbench in a browser: editing with live diagnostics, running and plotting (checked
against closed-form solutions), re-running from a slider without compiling again, the colouring
replay of the teaching view (checked against `eqm explain --steps`), the diagram, the analysis,
saving, downloads, and the token."""

import csv
import io
import json
import math
import re
import subprocess
import urllib.error
import urllib.request

from conftest import eqm_bin, screenshot

# A decay model whose equation names an undeclared variable on line 5, column 15.
BROKEN_DECAY = """model Scratch "der(x) = -k*x, x(0) = 1"
  parameter Real k = 0.5 "Rate";
  Real x(start = 1, fixed = true) "Decaying quantity";
equation
  der(x) = -k*y;
  annotation(experiment(StartTime = 0, StopTime = 10, Interval = 0.01));
end Scratch;
"""


def open_file(page, path):
    page.click(f".file[data-path='{path}'] .file-path")
    page.wait_for_function(f"document.querySelector('.file-name').textContent === {json.dumps(path)}")


def completed_runs(page):
    return int(page.get_attribute("body", "data-completed-runs") or "0")


def wait_runs(page, count, timeout=60000):
    try:
        page.wait_for_function(f"Number(document.body.dataset.completedRuns || 0) >= {count}", timeout=timeout)
    except Exception as error:
        raise AssertionError(f"no run finished; the page says: {page.inner_text('#message')!r}") from error


def run(page):
    before = completed_runs(page)
    page.click(".cm-content")
    page.keyboard.press("Control+Enter")
    wait_runs(page, before + 1)


def final_values(page):
    return json.loads(page.get_attribute("#plot", "data-final"))


def api(page, method, url, body=None):
    script = """async ([method, url, body]) => {
        const r = await fetch(url, {method, headers: {'Content-Type': 'application/json'}, body: body === null ? undefined : JSON.stringify(body)});
        return [r.status, await r.json()];
    }"""
    return page.evaluate(script, [method, url, body])


def editor_line(page):
    return page.evaluate("window.eqmEditor.view.state.doc.lineAt(window.eqmEditor.view.state.selection.main.head).number")


def test_page_lists_files_and_models(page, server):
    files = page.eval_on_selector_all(".file", "els => els.map(e => e.dataset.path)")
    assert files == sorted(["decay.eqm", "spring_mass.eqm", "rc_circuit.eqm", "pendulum.eqm"])
    open_file(page, "spring_mass.eqm")
    assert page.eval_on_selector(".file[data-path='spring_mass.eqm'] .file-model", "e => e.textContent") == "SpringMass"
    assert page.input_value("#model") == "SpringMass"
    assert "model SpringMass" in page.evaluate("window.eqmEditor.text()")
    screenshot(page, "overview")


def test_diagnostic_at_its_line_then_fixed_and_run(page, server):
    (server.root / "scratch.eqm").write_text("model Scratch\nend Scratch;\n")
    page.reload()
    page.wait_for_selector("body[data-ready=true]")
    open_file(page, "scratch.eqm")
    page.click(".cm-content")
    page.keyboard.press("Control+a")
    page.keyboard.insert_text(BROKEN_DECAY)
    # The check runs after typing stops: the error is listed and marked at line 5.
    row = page.wait_for_selector(".diag.error[data-code='E0205']", timeout=30000)
    assert row.get_attribute("data-line") == "5"
    assert "y" in row.inner_text()
    page.wait_for_selector(".cm-lintRange-error")
    marked_line = page.evaluate("""() => {
        const range = document.querySelector('.cm-lintRange-error');
        const view = window.eqmEditor.view;
        return view.state.doc.lineAt(view.posAtDOM(range)).number;
    }""")
    assert marked_line == 5
    screenshot(page, "diagnostics")
    # Clicking the diagnostic puts the cursor on the undeclared name; typing replaces it.
    row.click()
    assert editor_line(page) == 5
    page.keyboard.press("Shift+ArrowRight")
    page.keyboard.type("x")
    page.wait_for_selector(".diag-ok", timeout=30000)
    assert page.get_attribute("body", "data-dirty") == "true"
    run(page)
    page.wait_for_selector(".readout .ro[data-var='x']")
    final = final_values(page)
    assert final["time"] == 10
    assert math.isclose(final["x"], math.exp(-0.5 * 10), rel_tol=1e-4), final["x"]
    shown = float(page.get_attribute(".readout .ro[data-var='x']", "data-value"))
    assert math.isclose(shown, math.exp(-5), rel_tol=1e-4)
    screenshot(page, "plot")


def test_slider_reruns_without_compiling(page, server):
    open_file(page, "spring_mass.eqm")
    run(page)
    final = final_values(page)
    # m = 1, c = 4, s(0) = 1, v(0) = 0: s = cos(2 t).
    assert math.isclose(final["mass.flange_b.s"], math.cos(20), abs_tol=1e-4)
    compiles = api(page, "GET", "api/status")[1]["compiles"]
    before = completed_runs(page)
    slider = ".param[data-param='spring.c'] .param-slider"
    low, high = float(page.get_attribute(slider, "min")), float(page.get_attribute(slider, "max"))
    page.fill(slider, str(low + 0.8 * (high - low)))
    wait_runs(page, before + 1)
    c = float(page.input_value(slider))
    assert c != 4
    final = final_values(page)
    # s = cos(sqrt(c/m) t) with the slider's value of c.
    assert math.isclose(final["mass.flange_b.s"], math.cos(math.sqrt(c) * 10), abs_tol=1e-4), (c, final["mass.flange_b.s"])
    assert api(page, "GET", "api/status")[1]["compiles"] == compiles
    assert page.evaluate("window.eqmLastRedrawMs") > 0
    assert re.match(r"re-run in [\d.]+ ms", page.inner_text("#rerun"))
    runs = page.eval_on_selector_all(".run-item", "els => els.map(e => e.textContent)")
    assert len(runs) == 2 and "spring.c=" in runs[1]
    screenshot(page, "slider")


def cli_colouring(path):
    out = subprocess.run([eqm_bin(), "explain", "--keep-aliases", "--steps", str(path)], capture_output=True, text=True, check=True).stdout
    steps = re.findall(r"^\s+\d+\. .*?\b(e\d+) solves for .*?, number (\d+)", out, re.M)
    return {label: int(number) for label, number in steps}, len(steps)


def test_colouring_replay_numbers_like_explain_steps(page, server):
    expected, count = cli_colouring(server.root / "spring_mass.eqm")
    assert count == 11 and sorted(expected.values()) == list(range(1, 12))
    open_file(page, "spring_mass.eqm")
    page.click(".tab[data-tab=explain]")
    page.check(".keep-aliases")
    page.wait_for_selector(".step-counter[data-total='11']", timeout=30000)
    numbers = lambda: page.eval_on_selector_all(".bipartite .eq", "els => Object.fromEntries(els.map(e => [e.dataset.label, e.dataset.number]))")
    assert set(numbers().values()) == {""}
    seen = {}
    for step in range(1, count + 1):
        page.click(".step-fwd")
        page.wait_for_selector(f".step-counter[data-step='{step}']")
        text = page.inner_text(".step-text")
        label = re.search(r"(e\d+) solves for", text).group(1)
        seen[label] = int(numbers()[label])
        if step == 6:
            screenshot(page, "colouring")
    assert seen == expected
    assert {k: int(v) for k, v in numbers().items()} == expected
    assert page.eval_on_selector_all(".bipartite .edge.red", "els => els.length") == 11
    # Back undoes the last step.
    page.click(".step-back")
    assert page.get_attribute(".step-counter", "data-step") == str(count - 1)
    assert "" in numbers().values()
    # The origin of e1 (the first equation of the class `Mass`, instantiated as `mass`) jumps
    # the editor to the line where that equation is written.
    source = (server.root / "spring_mass.eqm").read_text().splitlines()
    written = next(i + 1 for i, line in enumerate(source) if line.strip() == "flange_a.s = flange_b.s;")
    page.click(".eq-table tr:first-child a.origin")
    assert editor_line(page) == written


def test_diagram_box_jumps_to_declaration(page, server):
    open_file(page, "spring_mass.eqm")
    page.click(".tab[data-tab=diagram]")
    page.wait_for_selector(".diagram-body g[data-name='spring']", timeout=30000)
    page.click(".diagram-body g[data-name='spring']")
    source = (server.root / "spring_mass.eqm").read_text().splitlines()
    declared = next(i + 1 for i, line in enumerate(source) if line.lstrip().startswith("Spring spring("))
    assert editor_line(page) == declared
    screenshot(page, "diagram")


def test_analysis_shows_the_oscillators_eigenvalues(page, server):
    open_file(page, "spring_mass.eqm")
    page.click(".tab[data-tab=analyze]")
    page.wait_for_selector(".eigen-table tbody tr", timeout=30000)
    rows = page.eval_on_selector_all(".eigen-table tbody tr", "els => els.map(r => [...r.cells].map(c => c.textContent))")
    # A = [[0, 1], [-c/m, 0]] with c/m = 4: eigenvalues ±2i.
    assert sorted(float(r[2]) for r in rows) == [-2, 2]
    assert all(float(r[1]) == 0 for r in rows)
    assert page.query_selector(".advice-table tbody tr") is not None
    screenshot(page, "analyze")


def test_save_writes_the_file(page, server):
    (server.root / "saved.eqm").write_text((server.root / "decay.eqm").read_text())
    page.reload()
    page.wait_for_selector("body[data-ready=true]")
    open_file(page, "saved.eqm")
    page.click(".cm-content")
    page.keyboard.press("Control+End")
    page.keyboard.insert_text("// edited in the workbench\n")
    page.wait_for_selector(".topbar .dirty:not([hidden])")
    page.keyboard.press("Control+s")
    page.wait_for_selector(".topbar .dirty[hidden]", state="attached")
    page.wait_for_function("document.querySelector('#message').textContent.startsWith('Saved')")
    on_disk = (server.root / "saved.eqm").read_text()
    assert on_disk == page.evaluate("window.eqmEditor.text()")
    assert on_disk.endswith("// edited in the workbench\n")


def test_downloads_csv_and_svg(page, server):
    open_file(page, "decay.eqm")
    run(page)
    with page.expect_download() as info:
        page.click(".dl-csv")
    rows = list(csv.reader(io.StringIO(open(info.value.path()).read())))
    header, last = rows[0], rows[-1]
    assert float(last[header.index("time")]) == 10
    assert math.isclose(float(last[header.index("x")]), math.exp(-5), rel_tol=1e-4)
    with page.expect_download() as info:
        page.click(".dl-svg")
    svg = open(info.value.path()).read()
    assert svg.startswith("<svg") and "<path d=\"M" in svg and ">x</text>" in svg


def test_missing_token_gives_401(chromium, server):
    context = chromium.new_context()
    page = context.new_page()
    response = page.goto(server.base)
    assert response.status == 401
    assert "token" in page.inner_text("body").lower()
    screenshot(page, "token")
    context.close()
    try:
        urllib.request.urlopen(server.base + "api/status")
        raise AssertionError("the API answered without a token")
    except urllib.error.HTTPError as error:
        assert error.code == 401
        assert "error" in json.loads(error.read())


def test_y_over_x_phase_plot(page, server):
    open_file(page, "spring_mass.eqm")
    run(page)
    page.click("#variables .var-none")
    page.check("#variables input[data-var='mass.v']")
    page.select_option(".x-var", "mass.flange_b.s")
    page.wait_for_selector(".plot-area canvas")
    assert page.inner_text(".plot-legend") == "mass.v"
    # The phase portrait of s = cos(2t), v = -2 sin(2t) is the ellipse s² + v²/4 = 1: the
    # axes span at least s in [-1, 1] and v in [-2, 2].
    x0, x1, y0, y1 = page.evaluate("window.eqmPlot.plot ? ['x', 'y'].flatMap((k) => [window.eqmPlot.plot.scales[k].min, window.eqmPlot.plot.scales[k].max]) : []")
    assert x0 <= -0.99 and x1 >= 0.99 and y0 <= -1.99 and y1 >= 1.99, (x0, x1, y0, y1)
    with page.expect_download() as info:
        page.click(".dl-svg")
    svg = open(info.value.path()).read()
    assert ">mass.flange_b.s</text>" in svg and ">mass.v</text>" in svg
    screenshot(page, "phase")


def test_api_errors_are_messages(page, server):
    (server.root / "broken.eqm").write_text(BROKEN_DECAY.replace("Scratch", "Broken"))
    page.reload()
    page.wait_for_selector("body[data-ready=true]")
    open_file(page, "broken.eqm")
    # Running a model with an error: the 422's diagnostics are listed, the message says so.
    page.click("#run")
    page.wait_for_selector("#message.error")
    page.wait_for_selector(".diag.error[data-code='E0205'][data-line='5']")
    assert page.is_enabled("#run")
    # A server that cannot be reached is a message too, not a broken page.
    open_file(page, "decay.eqm")
    page.route("**/api/run", lambda route: route.abort())
    page.click("#run")
    page.wait_for_function("document.querySelector('#message').textContent.includes('cannot be reached')")
    assert page.is_enabled("#run")
