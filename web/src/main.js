// The workbench page: a file list, the editor with live diagnostics, and the views (plot with
// parameters and runs, explain, diagram, analyze), wired to the server of `eqm serve`. This
// module keeps the page's state (the open file, the compiled model, the runs in flight) and
// turns every failure of the server into a message in the page.

import './style.css';
import { api, ApiError, download, esc, fmt } from './api.js';
import { createEditor, samePath } from './editor.js';
import { PlotView } from './plot.js';
import { ExplainView } from './explain.js';
import { DiagramView, AnalyzeView, ParamsView } from './views.js';

const $ = (sel) => document.querySelector(sel);

const state = {
  files: [],
  path: null,
  saved: new Map(), // path → text on disk
  buffers: new Map(), // path → unsaved text
  diagnostics: [],
  symbols: { classes: [], variables: [] },
  compiled: null, // the answer of /api/compile, with the key it was compiled for
  running: null, // the run_id of the explicit run in flight
  live: { inFlight: false, pending: null },
  runCounter: 0,
  lastRunBody: null,
};

function message(text, kind = 'info') {
  const el = $('#message');
  el.textContent = text;
  el.className = kind;
}

function showError(error, what) {
  if (error instanceof ApiError) {
    message(`${what}: ${error.message}`, 'error');
    if (error.diagnostics && error.diagnostics.length) setDiagnostics(error.diagnostics);
  } else {
    message(`${what}: ${error && error.message ? error.message : error}`, 'error');
  }
}

window.addEventListener('error', (e) => message(`Unexpected error: ${e.message}`, 'error'));
window.addEventListener('unhandledrejection', (e) => {
  e.preventDefault();
  showError(e.reason, 'Unexpected error');
});

// ---- editor ----------------------------------------------------------------------------------

const editor = createEditor($('#editor'), {
  path: () => state.path,
  onChange: (text) => {
    if (!state.path) return;
    if (text === state.saved.get(state.path)) state.buffers.delete(state.path);
    else state.buffers.set(state.path, text);
    updateDirty();
  },
  check: async (text) => {
    if (!state.path) return null;
    const path = state.path;
    try {
      const answer = await api.check({ path, text, model: selectedModel() });
      // An answer for a file or text no longer shown is dropped.
      if (state.path !== path || editor.text() !== text) return null;
      setDiagnostics(answer.diagnostics, answer.ok ? answer.summary : null);
      if (answer.ok) refreshSymbols(text);
      return answer.diagnostics;
    } catch (error) {
      showError(error, 'Check');
      return error.diagnostics && error.diagnostics.length ? error.diagnostics : [];
    }
  },
  symbols: () => state.symbols,
  save: () => save(),
  run: () => runModel(),
});
window.eqmEditor = editor;

let symbolsTimer = null;
function refreshSymbols(text) {
  clearTimeout(symbolsTimer);
  symbolsTimer = setTimeout(async () => {
    try {
      state.symbols = await api.symbols({ path: state.path, text });
    } catch {
      // Completion keeps the symbols it had; a failure here is shown by check already.
    }
  }, 300);
}

function setDiagnostics(diagnostics, summary) {
  state.diagnostics = diagnostics || [];
  const list = $('#diagnostics');
  $('#diag-count').textContent = String(state.diagnostics.length);
  $('#diag-count').className = `badge ${state.diagnostics.some((d) => d.severity === 'error') ? 'bad' : state.diagnostics.length ? 'warn' : 'good'}`;
  if (!state.diagnostics.length) {
    list.innerHTML = `<div class="muted diag-ok">${esc(summary || 'No problems.')}</div>`;
    return;
  }
  list.innerHTML = state.diagnostics.map((d, i) => `<div class="diag ${esc(d.severity)}" data-index="${i}" data-code="${esc(d.code)}" data-line="${d.line ?? ''}" title="${esc(d.rendered || '')}">
      <span class="diag-sev">${esc(d.severity)}</span><span class="diag-code">${esc(d.code || '')}</span>
      <span class="diag-loc">${d.file ? esc(d.file) : ''}${d.line != null ? `:${d.line}:${d.col}` : ''}</span>
      <span class="diag-msg">${esc(d.message)}</span></div>`).join('');
}

$('#diagnostics').addEventListener('click', (e) => {
  const row = e.target.closest('.diag');
  if (!row) return;
  const d = state.diagnostics[+row.dataset.index];
  if (d && d.line != null) jumpToFileLine(d.file, d.line, d.col);
});

async function jumpToFileLine(file, line, col) {
  if (file && state.path && !samePath(file, state.path)) {
    const target = state.files.find((f) => samePath(f.path, file));
    if (!target) { message(`${file} is not in the folder.`, 'error'); return; }
    await openFile(target.path);
  }
  editor.jumpTo(line, col);
}

// The line of the open text that declares the component `name` (`Type name(...)`), if any.
function findDeclaration(name) {
  const pattern = new RegExp(`^\\s*(?:(?:inner|outer|parameter|constant|input|output|flow|discrete|final|replaceable)\\s+)*[A-Za-z_][\\w.]*(?:\\[[^\\]]*\\])?\\s+${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\b\\s*(?:[([;"=]|$)`);
  const lines = editor.text().split('\n');
  const index = lines.findIndex((line) => pattern.test(line) && !/^\s*(model|block|connector|record|package|function|type|class|end|equation|algorithm)\b/.test(line));
  return index >= 0 ? index + 1 : null;
}

function jumpToOrigin(origin) {
  const m = /^(.*):(\d+):(\d+)$/.exec(origin);
  if (m) jumpToFileLine(m[1], +m[2], +m[3]);
}

// ---- files -----------------------------------------------------------------------------------

async function loadFiles() {
  try {
    const answer = await api.files();
    state.files = answer.files;
    $('.root-name').textContent = answer.root;
    renderFiles();
  } catch (error) {
    showError(error, 'Listing the files');
    $('#files').innerHTML = `<div class="error-box">${esc(error.message)}</div>`;
  }
}

function renderFiles() {
  $('#files').innerHTML = state.files.map((f) => `<div class="file ${f.path === state.path ? 'open' : ''}" data-path="${esc(f.path)}">
      <div class="file-path">${esc(f.path)}${state.buffers.has(f.path) ? ' <span class="dirty">●</span>' : ''}<span class="fmt">${esc(f.format)}</span></div>
      ${f.error ? `<div class="file-error" title="${esc(f.error)}">${esc(f.error)}</div>` : f.models.map((m) => `<div class="file-model" data-model="${esc(m)}">${esc(m)}</div>`).join('')}</div>`).join('')
    || '<div class="muted">No model files in this folder.</div>';
}

$('#files').addEventListener('click', async (e) => {
  const file = e.target.closest('.file');
  if (!file) return;
  const model = e.target.closest('.file-model');
  await openFile(file.dataset.path, model ? model.dataset.model : undefined);
});

async function openFile(path, model) {
  try {
    let text = state.buffers.get(path);
    if (text === undefined) {
      const answer = await api.readFile(path);
      state.saved.set(path, answer.text);
      text = answer.text;
    }
    state.path = path;
    state.symbols = { classes: [], variables: [] };
    $('.file-name').textContent = path;
    const entry = state.files.find((f) => f.path === path);
    const models = entry ? entry.models : [];
    $('#model').innerHTML = models.map((m) => `<option value="${esc(m)}">${esc(m)}</option>`).join('');
    if (model) $('#model').value = model;
    editor.setText(text);
    updateDirty();
    renderFiles();
    const url = new URL(window.location.href);
    url.searchParams.set('file', path);
    url.searchParams.delete('token');
    history.replaceState(null, '', url);
    message(`Opened ${path}.`);
    refreshSymbols(text);
  } catch (error) {
    showError(error, `Opening ${path}`);
  }
}

function updateDirty() {
  const dirty = state.path != null && state.buffers.has(state.path);
  $('.topbar .dirty').hidden = !dirty;
  document.body.dataset.dirty = dirty ? 'true' : 'false';
  const row = document.querySelector(`.file[data-path="${CSS.escape(state.path || '')}"] .file-path`);
  if (row) {
    const mark = row.querySelector('.dirty');
    if (dirty && !mark) row.insertAdjacentHTML('beforeend', ' <span class="dirty">●</span>');
    if (!dirty && mark) mark.remove();
  }
}

async function save() {
  if (!state.path) return;
  const path = state.path;
  const text = editor.text();
  try {
    const answer = await api.writeFile(path, text);
    state.saved.set(path, text);
    if (editor.text() === text) state.buffers.delete(path);
    updateDirty();
    message(`Saved ${answer.path} (${answer.bytes} bytes).`, 'good');
    refreshModels();
  } catch (error) {
    showError(error, `Saving ${path}`);
  }
}

// The models of the saved files may have changed: the list is read again.
async function refreshModels() {
  try {
    const answer = await api.files();
    state.files = answer.files;
    const entry = state.files.find((f) => f.path === state.path);
    const chosen = selectedModel();
    if (entry) {
      $('#model').innerHTML = entry.models.map((m) => `<option value="${esc(m)}">${esc(m)}</option>`).join('');
      if (chosen && entry.models.includes(chosen)) $('#model').value = chosen;
    }
    renderFiles();
  } catch (error) {
    showError(error, 'Listing the files');
  }
}

$('#save').onclick = () => save();
$('#new-file').onclick = () => { $('#new-file-form').hidden = false; $('#new-file-name').focus(); };
$('#new-file-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  let name = $('#new-file-name').value.trim();
  if (!name) return;
  if (!/\.(eqm|mo|xmile|stmx|mdl)$/.test(name)) name += '.eqm';
  const model = (name.split('/').pop().replace(/\.\w+$/, '').replace(/\W/g, '_').replace(/^(\d)/, 'M$1')) || 'Model';
  const title = model.charAt(0).toUpperCase() + model.slice(1);
  try {
    await api.writeFile(name, `model ${title}\n  Real x(start = 1, fixed = true);\nequation\n  der(x) = -x;\nend ${title};\n`);
    $('#new-file-form').hidden = true;
    $('#new-file-name').value = '';
    await loadFiles();
    await openFile(name);
  } catch (error) {
    showError(error, `Creating ${name}`);
  }
});

window.addEventListener('beforeunload', (e) => {
  if (state.buffers.size) e.preventDefault();
});

// ---- compile and run -------------------------------------------------------------------------

function selectedModel() {
  return $('#model').value || undefined;
}

const plot = new PlotView($('#plot'), { onCsv: () => downloadCsv() });
plot.attachPanels($('#variables'), $('#runs'));
window.eqmPlot = plot;
plot.onSvg = (svg) => download(`${state.compiled ? state.compiled.name : 'plot'}.svg`, svg, 'image/svg+xml');
const params = new ParamsView($('#params'), { onChange: (name, value, t0) => liveRun(t0) });

function settings() {
  const out = {};
  const num = (id) => {
    const v = $(id).value.trim();
    return v === '' ? undefined : Number(v);
  };
  const pairs = { stop: '#set-stop', interval: '#set-interval', rtol: '#set-rtol', atol: '#set-atol', step: '#set-step' };
  for (const [key, id] of Object.entries(pairs)) {
    const v = num(id);
    if (v !== undefined && Number.isFinite(v)) out[key] = v;
  }
  if ($('#set-method').value) out.method = $('#set-method').value;
  return out;
}

// Compiles the open text (the server answers from its cache when nothing changed).
async function compile() {
  const body = { path: state.path, text: editor.text(), model: selectedModel() };
  const key = JSON.stringify(body);
  if (state.compiled && state.compiled.key === key) return state.compiled;
  message('Compiling…');
  const answer = await api.compile(body);
  const previous = state.compiled;
  state.compiled = { ...answer, key };
  if (!previous || previous.model_id !== answer.model_id) {
    const sameModel = previous && previous.name === answer.name;
    if (!sameModel) {
      plot.setModel(answer.variables, answer.plotted);
      const e = answer.experiment || {};
      $('#set-stop').value = e.stop ?? '';
      $('#set-interval').value = e.interval ?? '';
      $('#set-rtol').placeholder = e.tolerance != null ? String(e.tolerance) : '1e-6';
    }
    params.setParameters(answer.parameters || []);
  }
  if (answer.warnings && answer.warnings.length) setDiagnostics(answer.warnings);
  return state.compiled;
}

function labelFor(changed) {
  const entries = Object.entries(changed);
  return entries.length ? entries.map(([k, v]) => `${k}=${fmt(v, 4)}`).join(', ') : 'defaults';
}

async function runModel() {
  if (!state.path) { message('Open a file first.', 'error'); return; }
  if (state.running) return;
  const runId = `r${++state.runCounter}`;
  state.running = runId;
  $('#run').disabled = true;
  $('#cancel').disabled = false;
  try {
    const compiled = await compile();
    message(`Running ${compiled.name}…`);
    const changed = params.changed();
    const body = { model_id: compiled.model_id, run_id: runId, parameters: changed, settings: settings() };
    const result = await runWithRecompile(body);
    state.lastRunBody = body;
    plot.addRun(result, labelFor(changed));
    countRun();
    message(`${compiled.name}: ${result.rows} rows in ${fmt(result.elapsed_ms, 3)} ms${result.truncated ? ' (truncated at the row limit)' : ''}.`, 'good');
    if (result.warnings && result.warnings.length) setDiagnostics(result.warnings);
    updateCounts(result);
  } catch (error) {
    if (error instanceof ApiError && error.body && error.body.columns) {
      plot.addRun({ ...error.body, rows: error.body.values?.[0]?.length ?? 0 }, 'stopped');
    }
    showError(error, 'Run');
  } finally {
    state.running = null;
    $('#run').disabled = false;
    $('#cancel').disabled = true;
  }
}

// A model the server dropped from its cache (404) is compiled again once.
async function runWithRecompile(body) {
  try {
    return await api.run(body);
  } catch (error) {
    if (!(error instanceof ApiError) || error.status !== 404) throw error;
    state.compiled = null;
    const compiled = await compile();
    return await api.run({ ...body, model_id: compiled.model_id });
  }
}

// A parameter moved: re-run the compiled model with the new values. At most one run is in
// flight; when it ends, the latest values run next (intermediate ones are skipped).
function liveRun(t0) {
  if (!state.compiled) return;
  state.live.pending = { t0, parameters: params.changed() };
  if (!state.live.inFlight) pumpLive();
}

async function pumpLive() {
  state.live.inFlight = true;
  try {
    while (state.live.pending) {
      const job = state.live.pending;
      state.live.pending = null;
      const variables = [...new Set([...plot.selected, ...(plot.xVar !== 'time' ? [plot.xVar] : [])])];
      const body = { model_id: state.compiled.model_id, run_id: `live${++state.runCounter}`, parameters: job.parameters, settings: settings(), variables };
      try {
        const result = await runWithRecompile(body);
        state.lastRunBody = body;
        const drawn = plot.nextDraw();
        plot.addRun(result, labelFor(job.parameters), { live: true });
        await Promise.race([drawn, new Promise((r) => setTimeout(r, 1000))]);
        const ms = performance.now() - job.t0;
        window.eqmLastRedrawMs = ms;
        $('#rerun').textContent = `re-run in ${ms.toFixed(1)} ms`;
        $('#rerun').dataset.ms = String(ms);
        updateCounts(result);
        countRun();
      } catch (error) {
        showError(error, 'Re-run');
      }
    }
  } finally {
    state.live.inFlight = false;
  }
}

// Counts the finished runs on the body (`data-completed-runs`), for tests and scripts.
let completedRuns = 0;
function countRun() {
  document.body.dataset.completedRuns = String(++completedRuns);
}

function updateCounts(result) {
  $('#counts').textContent = `compiles ${result.compiles} · runs ${result.runs}`;
}

$('#run').onclick = () => runModel();
$('#cancel').onclick = async () => {
  if (!state.running) return;
  try {
    const answer = await api.cancel(state.running);
    message(answer.cancelled ? 'Cancelled.' : 'Nothing to cancel.');
  } catch (error) {
    showError(error, 'Cancel');
  }
};
$('#model').onchange = () => { state.compiled = null; editor.view.dispatch({}); };
document.addEventListener('keydown', (e) => {
  // The editor handles its own shortcuts (and marks them handled); these are for the rest.
  if (e.defaultPrevented) return;
  if ((e.ctrlKey || e.metaKey) && e.key === 'Enter') { e.preventDefault(); runModel(); }
  if ((e.ctrlKey || e.metaKey) && (e.key === 's' || e.key === 'S')) { e.preventDefault(); save(); }
});

async function downloadCsv() {
  if (!state.lastRunBody) { message('Run the model first.', 'error'); return; }
  try {
    const { variables, ...body } = state.lastRunBody;
    const response = await api.runCsv({ ...body, run_id: `csv${++state.runCounter}` });
    download(`${state.compiled.name}.csv`, await response.blob(), 'text/csv');
  } catch (error) {
    showError(error, 'CSV');
  }
}

// ---- views -----------------------------------------------------------------------------------

const model = () => ({ path: state.path, text: editor.text(), model: selectedModel() });
const explain = new ExplainView($('#explain'), {
  load: (opts) => (state.path ? api.explain({ ...model(), ...opts }) : null),
  jump: jumpToOrigin,
  jumpLine: (line) => editor.jumpTo(line, 1),
  findDeclaration,
});
const diagram = new DiagramView($('#diagram'), {
  load: () => (state.path ? api.diagram(model()) : null),
  jumpToElement: (el) => jumpToFileLine(el.file, el.line, el.col),
  save: (svg) => download(`${selectedModel() || 'diagram'}-diagram.svg`, svg, 'image/svg+xml'),
});
const analyze = new AnalyzeView($('#analyze'), {
  load: (method) => (state.path ? api.analyze({ ...model(), parameters: params.changed(), method }) : null),
});
const views = { explain, diagram, analyze };

document.querySelector('.tabs').addEventListener('click', (e) => {
  const tab = e.target.closest('.tab');
  if (!tab) return;
  document.querySelectorAll('.tab').forEach((t) => t.classList.toggle('active', t === tab));
  document.querySelectorAll('.tab-page').forEach((p) => p.classList.toggle('active', p.dataset.page === tab.dataset.tab));
  const view = views[tab.dataset.tab];
  if (view && state.path) view.refresh();
  if (tab.dataset.tab === 'plot') plot.resize();
});

// ---- start -----------------------------------------------------------------------------------

async function start() {
  setDiagnostics([]);
  try {
    const status = await api.status();
    // `auto` (the server's default) comes first and is chosen.
    const methods = ['auto', ...(status.methods || []).filter((m) => m !== 'auto')];
    $('#set-method').innerHTML = methods.map((m) => `<option value="${esc(m === 'auto' ? '' : m)}">${esc(m)}</option>`).join('');
    analyze.setMethods(methods);
    $('#counts').textContent = `compiles ${status.compiles} · runs ${status.runs}`;
    document.title = `${status.root} – EQM workbench`;
  } catch (error) {
    showError(error, 'Connecting to the server');
    if (error.status === 401) {
      document.body.insertAdjacentHTML('afterbegin', `<div class="fatal">The server did not accept this page's token. Open the address that <code>eqm serve</code> printed (with <code>?token=…</code>).</div>`);
      return;
    }
  }
  await loadFiles();
  const wanted = new URLSearchParams(window.location.search).get('file');
  const first = state.files.find((f) => f.path === wanted) || state.files.find((f) => !f.error);
  if (first) await openFile(first.path);
  document.body.dataset.ready = 'true';
}

start();
