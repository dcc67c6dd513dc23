// The plot view: uPlot charts of the kept runs (overlaid), a filterable checklist of variables,
// an x variable (time, or any variable for y over x), zoom by dragging or the wheel, pan by
// shift-drag or buttons, a cursor readout, and downloads as CSV (the server's) and SVG (drawn
// here from the data and the current axes). It does not run anything: the page gives it runs.

import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { esc, fmt } from './api.js';

const PALETTE = ['#2563eb', '#dc2626', '#059669', '#d97706', '#7c3aed', '#0891b2', '#db2777', '#65a30d', '#4b5563', '#9333ea'];
const DASHES = [[], [6, 4], [2, 3], [10, 3, 2, 3]];
const MAX_RUNS = 8;
const PRESELECTED = 8;

export class PlotView {
  constructor(root, { onCsv }) {
    this.root = root;
    this.onCsv = onCsv;
    this.runs = [];
    this.selected = new Set();
    this.xVar = 'time';
    this.filter = '';
    this.plot = null;
    this.structure = '';
    this.drawWaiters = [];
    this.nextRunNumber = 1;
    root.innerHTML = `
      <div class="plot-toolbar">
        <label>x <select class="x-var" title="The variable on the x axis (time, or another for y over x)"><option value="time">time</option></select></label>
        <span class="sep"></span>
        <button class="zoom-in" title="Zoom in">+</button><button class="zoom-out" title="Zoom out">−</button>
        <button class="pan-left" title="Pan left">◀</button><button class="pan-right" title="Pan right">▶</button>
        <button class="reset-zoom" title="Show everything">Reset zoom</button>
        <span class="sep"></span>
        <button class="dl-csv" title="The last run as CSV">CSV</button>
        <button class="dl-svg" title="The plot as SVG">SVG</button>
        <span class="hint">drag: zoom · wheel: zoom · shift-drag: pan · double-click: reset</span>
      </div>
      <div class="plot-area"><div class="plot-empty">Run a model (Ctrl-Enter) to see its results here.</div></div>
      <div class="readout" aria-live="off"></div>`;
    this.area = root.querySelector('.plot-area');
    this.readout = root.querySelector('.readout');
    this.xSelect = root.querySelector('.x-var');
    this.xSelect.addEventListener('change', () => { this.xVar = this.xSelect.value; this.render(true); });
    root.querySelector('.zoom-in').onclick = () => this.zoom(0.5);
    root.querySelector('.zoom-out').onclick = () => this.zoom(2);
    root.querySelector('.pan-left').onclick = () => this.pan(-0.25);
    root.querySelector('.pan-right').onclick = () => this.pan(0.25);
    root.querySelector('.reset-zoom').onclick = () => this.resetZoom();
    root.querySelector('.dl-csv').onclick = () => this.onCsv();
    root.querySelector('.dl-svg').onclick = () => this.downloadSvg();
    new ResizeObserver(() => this.resize()).observe(this.area);
  }

  // The variables panel (checklist with a filter) and the runs panel live outside the chart.
  attachPanels(varsRoot, runsRoot) {
    this.varsRoot = varsRoot;
    this.runsRoot = runsRoot;
    varsRoot.innerHTML = `<input class="var-filter" type="search" placeholder="Filter variables">
      <div class="var-actions"><button class="var-none">None</button></div><div class="var-list"></div>`;
    varsRoot.querySelector('.var-filter').addEventListener('input', (e) => { this.filter = e.target.value.toLowerCase(); this.renderVars(); });
    varsRoot.querySelector('.var-none').onclick = () => { this.selected.clear(); this.renderVars(); this.render(true); };
  }

  // A new model: its variables and the ones its annotation asks to plot; the old runs go.
  setModel(variables, plotted) {
    this.variables = variables.map((v) => v.name);
    this.runs = [];
    // The model's plotted variables are preselected, at most PRESELECTED of them: a model with
    // thousands of states would otherwise draw (and transfer on every re-run) all of them.
    this.selected = new Set((plotted && plotted.length ? plotted : this.variables).slice(0, PRESELECTED));
    this.xVar = 'time';
    this.xSelect.innerHTML = ['time', ...this.variables].map((n) => `<option value="${esc(n)}">${esc(n)}</option>`).join('');
    this.renderVars();
    this.renderRuns();
    this.render(true);
  }

  renderVars() {
    if (!this.varsRoot) return;
    const list = this.varsRoot.querySelector('.var-list');
    const names = (this.variables || []).filter((n) => !this.filter || n.toLowerCase().includes(this.filter));
    list.innerHTML = names.slice(0, 2000).map((n) => `<label class="var-item"><input type="checkbox" data-var="${esc(n)}" ${this.selected.has(n) ? 'checked' : ''}> <span>${esc(n)}</span></label>`).join('')
      + (names.length > 2000 ? `<div class="muted">${names.length - 2000} more: narrow the filter</div>` : '');
    list.onchange = (e) => {
      const name = e.target.dataset.var;
      if (!name) return;
      if (e.target.checked) this.selected.add(name); else this.selected.delete(name);
      this.render(true);
    };
  }

  renderRuns() {
    if (!this.runsRoot) return;
    this.runsRoot.innerHTML = `<div class="runs-head"><span>${this.runs.length} run(s) kept (at most ${MAX_RUNS})</span><button class="runs-clear">Clear</button></div>`
      + this.runs.map((r, i) => `<label class="run-item" title="${esc(r.label)}"><input type="checkbox" data-run="${i}" ${r.visible ? 'checked' : ''}>
        <span class="run-swatch" style="border-top: 2px ${i % 2 ? 'dashed' : 'solid'} ${PALETTE[i % PALETTE.length]}"></span>
        <span>#${r.number} ${esc(r.label)}</span><span class="muted">${r.rows} rows${r.truncated ? ' (truncated)' : ''}, ${fmt(r.elapsed, 3)} ms</span></label>`).join('');
    this.runsRoot.querySelector('.runs-clear').onclick = () => this.clearRuns();
    this.runsRoot.onchange = (e) => {
      const i = e.target.dataset.run;
      if (i === undefined) return;
      this.runs[+i].visible = e.target.checked;
      this.render(true);
    };
  }

  clearRuns() {
    this.runs = this.runs.length ? [this.runs[this.runs.length - 1]] : [];
    this.renderRuns();
    this.render(true);
  }

  // Adds a run (or replaces the last one when both are `live`, i.e. from a moving slider).
  addRun(result, label, { live = false } = {}) {
    const columns = {};
    result.columns.forEach((name, i) => { columns[name] = result.values[i].map((v) => (v === null ? null : v)); });
    const run = { columns, label, live, visible: true, rows: result.rows, truncated: result.truncated, elapsed: result.elapsed_ms, number: 0 };
    const last = this.runs[this.runs.length - 1];
    let replaced = false;
    if (live && last && last.live) {
      run.number = last.number;
      run.visible = last.visible;
      this.runs[this.runs.length - 1] = run;
      replaced = true;
    } else {
      run.number = this.nextRunNumber++;
      this.runs.push(run);
      if (this.runs.length > MAX_RUNS) this.runs.shift();
    }
    for (const name of result.columns) if (name !== 'time' && !this.variables?.includes(name)) (this.variables ||= []).push(name);
    this.renderRuns();
    this.publishFinal(run);
    this.render(!replaced);
  }

  // The latest run's final values as a data attribute (read by tests and scripts).
  publishFinal(run) {
    const final = {};
    for (const [name, col] of Object.entries(run.columns)) final[name] = col[col.length - 1];
    this.root.dataset.final = JSON.stringify(final);
    this.root.dataset.runs = String(this.runs.length);
  }

  series() {
    const out = [];
    this.runs.forEach((run, r) => {
      if (!run.visible) return;
      for (const name of this.selected) {
        if (!run.columns[name]) continue;
        const colour = PALETTE[(out.length) % PALETTE.length];
        out.push({ run, r, name, colour, dash: DASHES[r % DASHES.length], label: this.runs.length > 1 ? `${name} [#${run.number}]` : name });
      }
    });
    return out;
  }

  // Whether the chart must be rebuilt (other series or axes) or can take new data in place.
  render(rebuild = false) {
    const series = this.series();
    const structure = JSON.stringify([this.xVar, series.map((s) => [s.r, s.name, s.label])]);
    if (!series.length) {
      this.destroy();
      this.area.innerHTML = `<div class="plot-empty">${this.runs.length ? 'Choose variables to plot.' : 'Run a model (Ctrl-Enter) to see its results here.'}</div>`;
      this.readout.innerHTML = '';
      this.flushDraw();
      return;
    }
    const data = this.data(series);
    if (!rebuild && this.plot && structure === this.structure) {
      this.plot.setData(data, true);
      return;
    }
    this.structure = structure;
    this.build(series, data);
  }

  data(series) {
    if (this.xVar !== 'time') {
      return [null, ...series.map((s) => [s.run.columns[this.xVar] || [], s.run.columns[s.name]])];
    }
    const runs = [...new Set(series.map((s) => s.run))];
    const sameGrid = runs.every((r) => sameArray(r.columns.time, runs[0].columns.time));
    if (sameGrid) return [runs[0].columns.time, ...series.map((s) => s.run.columns[s.name])];
    // Runs on different time grids: one joined grid with nulls where a run has no row.
    const tables = series.map((s) => [s.run.columns.time, s.run.columns[s.name]]);
    return uPlot.join(tables);
  }

  destroy() {
    if (this.plot) this.plot.destroy();
    this.plot = null;
    this.structure = this.plot ? this.structure : '';
  }

  build(series, data) {
    this.destroy();
    this.structure = JSON.stringify([this.xVar, series.map((s) => [s.r, s.name, s.label])]);
    this.area.innerHTML = '';
    const { width, height } = this.size();
    const xy = this.xVar !== 'time';
    const opts = {
      width,
      height,
      mode: xy ? 2 : 1,
      legend: { show: false },
      cursor: { drag: { x: true, y: xy, setScale: true } },
      scales: { x: { time: false, auto: true }, y: { auto: true } },
      axes: [{ label: this.xVar, stroke: '#374151', grid: { stroke: '#e5e7eb' } }, { stroke: '#374151', grid: { stroke: '#e5e7eb' } }],
      series: [
        xy ? {} : { label: 'time' },
        ...series.map((s) => ({
          label: s.label,
          stroke: s.colour,
          width: 1.5,
          dash: s.dash,
          spanGaps: true,
          points: { show: false },
          ...(xy ? { paths: uPlot.paths.linear(), facets: [{ scale: 'x', auto: true }, { scale: 'y', auto: true }] } : {}),
        })),
      ],
      hooks: {
        setCursor: [(u) => this.updateReadout(u)],
        draw: [() => this.flushDraw()],
      },
    };
    this.seriesInfo = series;
    this.plot = new uPlot(opts, data, this.area);
    this.installPan(this.plot);
    this.updateReadout(this.plot);
    this.renderLegend();
  }

  renderLegend() {
    let legend = this.root.querySelector('.plot-legend');
    if (!legend) {
      legend = document.createElement('div');
      legend.className = 'plot-legend';
      this.area.after(legend);
    }
    legend.innerHTML = this.seriesInfo.map((s) => `<span class="legend-item"><span class="legend-line" style="border-top: 2px ${s.dash.length ? 'dashed' : 'solid'} ${s.colour}"></span>${esc(s.label)}</span>`).join('');
  }

  // Resolves after the next drawing of the chart (the benchmark's "redrawn plot").
  nextDraw() {
    return new Promise((resolve) => { this.drawWaiters.push(resolve); });
  }

  flushDraw() {
    const waiters = this.drawWaiters;
    this.drawWaiters = [];
    for (const w of waiters) w();
  }

  updateReadout(u) {
    const info = this.seriesInfo || [];
    const idx = u.cursor.idx;
    const xy = this.xVar !== 'time';
    let head;
    let values;
    if (xy) {
      const left = u.cursor.left;
      const inside = left != null && left >= 0;
      head = inside ? `${esc(this.xVar)} = ${fmt(u.posToVal(left, 'x'))}, y = ${fmt(u.posToVal(u.cursor.top, 'y'))}` : `${esc(this.xVar)} (y over x): final values`;
      values = info.map((s) => {
        const col = s.run.columns[s.name];
        return [s, col[col.length - 1]];
      });
    } else if (idx != null) {
      head = `time = ${fmt(u.data[0][idx])}`;
      values = info.map((s, i) => [s, u.data[i + 1][idx]]);
    } else {
      head = 'final values';
      values = info.map((s) => {
        const col = s.run.columns[s.name];
        return [s, col[col.length - 1]];
      });
    }
    this.readout.innerHTML = `<span class="ro-head">${head}</span>` + values.map(([s, v]) => `<span class="ro" data-var="${esc(s.name)}" data-run="${s.run.number}" data-value="${v ?? ''}"><span class="ro-dot" style="background:${s.colour}"></span>${esc(s.label)} = <b>${fmt(v)}</b></span>`).join('');
  }

  installPan(u) {
    const over = u.over;
    over.addEventListener('wheel', (e) => {
      e.preventDefault();
      const rect = over.getBoundingClientRect();
      const frac = (e.clientX - rect.left) / rect.width;
      this.zoom(e.deltaY < 0 ? 0.8 : 1.25, frac);
    }, { passive: false });
    over.addEventListener('mousedown', (e) => {
      if (!e.shiftKey) return;
      e.stopPropagation();
      e.preventDefault();
      const start = e.clientX;
      const { min, max } = u.scales.x;
      const perPx = (max - min) / over.getBoundingClientRect().width;
      const move = (m) => u.setScale('x', { min: min - (m.clientX - start) * perPx, max: max - (m.clientX - start) * perPx });
      const up = () => { window.removeEventListener('mousemove', move); window.removeEventListener('mouseup', up); };
      window.addEventListener('mousemove', move);
      window.addEventListener('mouseup', up);
    }, true);
    over.addEventListener('dblclick', () => this.resetZoom());
  }

  zoom(factor, frac = 0.5) {
    const u = this.plot;
    if (!u) return;
    const { min, max } = u.scales.x;
    const at = min + (max - min) * frac;
    u.setScale('x', { min: at - (at - min) * factor, max: at + (max - at) * factor });
  }

  pan(fraction) {
    const u = this.plot;
    if (!u) return;
    const { min, max } = u.scales.x;
    const d = (max - min) * fraction;
    u.setScale('x', { min: min + d, max: max + d });
  }

  resetZoom() {
    if (this.plot) this.build(this.seriesInfo, this.data(this.seriesInfo));
  }

  size() {
    const rect = this.area.getBoundingClientRect();
    return { width: Math.max(200, Math.floor(rect.width) - 4), height: Math.max(160, Math.floor(rect.height) - 8) };
  }

  resize() {
    if (this.plot) this.plot.setSize(this.size());
  }

  // An SVG of what the chart shows now: its axes (with ticks), its lines and a legend.
  toSvg() {
    const u = this.plot;
    if (!u) return null;
    const W = 800;
    const H = 500;
    const m = { l: 70, r: 20, t: 20, b: 60 };
    const legendH = 18 * Math.ceil(this.seriesInfo.length / 3);
    const pw = W - m.l - m.r;
    const ph = H - m.t - m.b;
    const [x0, x1] = [u.scales.x.min, u.scales.x.max];
    const [y0, y1] = [u.scales.y.min, u.scales.y.max];
    const sx = (x) => m.l + ((x - x0) / (x1 - x0 || 1)) * pw;
    const sy = (y) => m.t + ph - ((y - y0) / (y1 - y0 || 1)) * ph;
    const parts = [`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H + legendH}" viewBox="0 0 ${W} ${H + legendH}" font-family="sans-serif" font-size="12">`,
      `<rect width="100%" height="100%" fill="white"/>`,
      `<defs><clipPath id="plot-clip"><rect x="${m.l}" y="${m.t}" width="${pw}" height="${ph}"/></clipPath></defs>`];
    for (const t of ticks(x0, x1)) parts.push(`<line x1="${sx(t)}" y1="${m.t}" x2="${sx(t)}" y2="${m.t + ph}" stroke="#e5e7eb"/><line x1="${sx(t)}" y1="${m.t + ph}" x2="${sx(t)}" y2="${m.t + ph + 5}" stroke="#374151"/><text x="${sx(t)}" y="${m.t + ph + 18}" text-anchor="middle">${esc(fmt(t, 4))}</text>`);
    for (const t of ticks(y0, y1)) parts.push(`<line x1="${m.l}" y1="${sy(t)}" x2="${m.l + pw}" y2="${sy(t)}" stroke="#e5e7eb"/><line x1="${m.l - 5}" y1="${sy(t)}" x2="${m.l}" y2="${sy(t)}" stroke="#374151"/><text x="${m.l - 8}" y="${sy(t) + 4}" text-anchor="end">${esc(fmt(t, 4))}</text>`);
    parts.push(`<rect x="${m.l}" y="${m.t}" width="${pw}" height="${ph}" fill="none" stroke="#374151"/>`);
    parts.push(`<text x="${m.l + pw / 2}" y="${m.t + ph + 40}" text-anchor="middle">${esc(this.xVar)}</text>`);
    const xy = this.xVar !== 'time';
    this.seriesInfo.forEach((s, i) => {
      const xs = xy ? s.run.columns[this.xVar] : u.data[0];
      const ys = xy ? s.run.columns[s.name] : u.data[i + 1];
      let d = '';
      let pen = false;
      for (let k = 0; k < ys.length; k++) {
        if (ys[k] == null || xs[k] == null) { pen = false; continue; }
        d += `${pen ? 'L' : 'M'}${sx(xs[k]).toFixed(2)} ${sy(ys[k]).toFixed(2)}`;
        pen = true;
      }
      parts.push(`<path d="${d}" fill="none" stroke="${s.colour}" stroke-width="1.5" ${s.dash.length ? `stroke-dasharray="${s.dash.join(' ')}"` : ''} clip-path="url(#plot-clip)"/>`);
    });
    this.seriesInfo.forEach((s, i) => {
      const lx = m.l + (i % 3) * 240;
      const ly = H + 18 * Math.floor(i / 3) - 4;
      parts.push(`<line x1="${lx}" y1="${ly}" x2="${lx + 24}" y2="${ly}" stroke="${s.colour}" stroke-width="2" ${s.dash.length ? `stroke-dasharray="${s.dash.join(' ')}"` : ''}/><text x="${lx + 30}" y="${ly + 4}">${esc(s.label)}</text>`);
    });
    parts.push('</svg>');
    return parts.join('\n');
  }

  downloadSvg() {
    const svg = this.toSvg();
    if (svg) this.onSvg?.(svg);
  }
}

function sameArray(a, b) {
  if (a === b) return true;
  if (!a || !b || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

// Round tick values between lo and hi (about six of them).
export function ticks(lo, hi) {
  if (!(hi > lo)) return [lo];
  const raw = (hi - lo) / 6;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((f) => f * mag).find((s) => s >= raw);
  const out = [];
  for (let t = Math.ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) out.push(Math.abs(t) < step * 1e-9 ? 0 : Number(t.toPrecision(12)));
  return out;
}
