"""The workbench's benchmark: the time from a slider change to the redrawn plot (the page's own
measure, `window.eqmLastRedrawMs`: from the slider's input event to the chart's next drawing)
for examples/spring_mass.eqm and for a chain of 1000 masses (chain1000.eqm beside this file),
the page's transferred size on load (the sum of the response bodies), and the server's
resident memory (VmRSS of /proc/PID/status) with 10 tabs open on the chain.

    EQM_BIN=target/release/eqm python benches/workbench/bench.py

(EQM_BIN defaults to target/debug/eqm.) Needs the Python package playwright and Debian's
Chromium (/usr/bin/chromium). Prints the numbers; it asserts nothing."""

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from playwright.sync_api import sync_playwright

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
REPEATS = 15


def start_server(root):
    eqm = os.environ.get("EQM_BIN", str(REPO / "target" / "debug" / "eqm"))
    process = subprocess.Popen([eqm, "serve", str(root), "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    url = process.stdout.readline().split("EQM workbench: ")[1].strip()
    threading.Thread(target=process.stdout.read, daemon=True).start()
    return process, url


def open_model(page, url, path):
    page.goto(url)
    page.wait_for_selector("body[data-ready=true]", timeout=60000)
    page.click(f".file[data-path='{path}'] .file-path")
    page.wait_for_function(f"document.querySelector('.file-name').textContent === '{path}'")
    before = int(page.get_attribute("body", "data-completed-runs") or 0)
    page.click("#run")
    page.wait_for_function(f"Number(document.body.dataset.completedRuns || 0) > {before}", timeout=300000)


def slider_times(page, parameter):
    slider = f".param[data-param='{parameter}'] .param-slider"
    low, high = float(page.get_attribute(slider, "min")), float(page.get_attribute(slider, "max"))
    times = []
    for i in range(REPEATS):
        value = low + (high - low) * (0.3 + 0.4 * (i % 2) + 0.01 * i)
        before = int(page.get_attribute("body", "data-completed-runs"))
        page.fill(slider, str(value))
        page.wait_for_function(f"Number(document.body.dataset.completedRuns) > {before}", timeout=60000)
        times.append(page.evaluate("window.eqmLastRedrawMs"))
    return times


def rss_kib(pid):
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def main():
    root = Path(tempfile.mkdtemp(prefix="eqm-bench-"))
    shutil.copy(REPO / "examples" / "spring_mass.eqm", root)
    shutil.copy(HERE / "chain1000.eqm", root)
    process, url = start_server(root)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=os.environ.get("EQM_CHROMIUM", "/usr/bin/chromium"), args=ARGS)
            context = browser.new_context(viewport={"width": 1500, "height": 900})
            page = context.new_page()
            sizes = []
            page.on("response", lambda r: sizes.append(len(r.body())) if r.status == 200 else None)
            page.goto(url)
            page.wait_for_selector("body[data-ready=true]")
            print(f"page load: {len(sizes)} responses, {sum(sizes) / 1024:.1f} KiB transferred (page, assets, first API answers)")
            for path, parameter in [("spring_mass.eqm", "spring.c"), ("chain1000.eqm", "c")]:
                open_model(page, url, path)
                times = slider_times(page, parameter)
                print(f"{path}: slider to redrawn plot, median {statistics.median(times):.1f} ms, "
                      f"min {min(times):.1f} ms, max {max(times):.1f} ms over {len(times)} changes")
            rss_one = rss_kib(process.pid)
            tabs = [page]
            for _ in range(9):
                tab = context.new_page()
                open_model(tab, url, "chain1000.eqm")
                tabs.append(tab)
            print(f"server memory: VmRSS {rss_one / 1024:.1f} MiB with 1 tab, {rss_kib(process.pid) / 1024:.1f} MiB with {len(tabs)} tabs on chain1000.eqm")
            browser.close()
    finally:
        process.terminate()
        process.wait(timeout=10)
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
