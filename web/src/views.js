// The diagram and analysis views and the parameter sliders: each renders what one call of the
// server answered (`/api/diagram`, `/api/analyze`, the compiled model's parameters); none of
// them computes a result of its own.

import { esc, fmt } from './api.js';

function errorBox(error) {
  return `<div class="error-box">${esc(error.message)}${(error.diagnostics || []).map((d) => `<pre>${esc(d.rendered || d.message)}</pre>`).join('')}</div>`;
}

export class DiagramView {
  constructor(root, { load, jumpToElement, save }) {
    this.root = root;
    this.load = load;
    root.innerHTML = `<div class="view-toolbar"><button class="diagram-refresh">Draw</button><button class="diagram-svg">Download SVG</button><span class="muted diagram-status">Click a box to find its declaration.</span></div><div class="diagram-body"></div>`;
    this.body = root.querySelector('.diagram-body');
    root.querySelector('.diagram-refresh').onclick = () => this.refresh();
    root.querySelector('.diagram-svg').onclick = () => this.data && save(this.data.svg);
    this.body.addEventListener('click', (e) => {
      const g = e.target.closest('g[data-name]');
      if (!g || !this.data) return;
      const element = this.data.elements.find((el) => el.name === g.dataset.name);
      this.body.querySelectorAll('g[data-name].selected').forEach((x) => x.classList.remove('selected'));
      g.classList.add('selected');
      if (element) jumpToElement(element);
    });
  }

  async refresh() {
    this.body.innerHTML = '<div class="muted">drawing…</div>';
    try {
      const data = await this.load();
      if (!data) { this.body.innerHTML = ''; return; }
      this.data = data;
      // The SVG is the server's own drawing of the model (its names are escaped there).
      this.body.innerHTML = `<div class="muted small">${esc(data.kind)} diagram, ${data.elements.length} element(s)</div><div class="diagram-svg-box">${data.svg}</div>`;
    } catch (error) {
      this.data = null;
      this.body.innerHTML = errorBox(error);
    }
  }
}

export class AnalyzeView {
  constructor(root, { load }) {
    this.root = root;
    this.load = load;
    root.innerHTML = `<div class="view-toolbar"><label>method <select class="analyze-method"><option value="">auto</option></select></label><button class="analyze-refresh">Analyze</button><span class="muted">linearisation at the steady state: eigenvalues, time scales, which method is stable</span></div><div class="analyze-body"></div>`;
    this.body = root.querySelector('.analyze-body');
    this.method = root.querySelector('.analyze-method');
    root.querySelector('.analyze-refresh').onclick = () => this.refresh();
  }

  setMethods(methods) {
    this.method.innerHTML = methods.map((m) => `<option value="${esc(m === 'auto' ? '' : m)}">${esc(m)}</option>`).join('');
  }

  async refresh() {
    this.body.innerHTML = '<div class="muted">analysing…</div>';
    try {
      const data = await this.load(this.method.value || undefined);
      if (!data) { this.body.innerHTML = ''; return; }
      this.render(data);
    } catch (error) {
      this.body.innerHTML = errorBox(error);
    }
  }

  render({ analysis: a, stability_svg: svg, method }) {
    const states = (a.states || []).map((s) => s.name);
    const ss = a.steady_state || {};
    const modes = a.modes || [];
    const topStates = (m) => (m.participation || []).map((p, i) => [p, states[i]]).sort((x, y) => y[0] - x[0]).slice(0, 3).filter(([p]) => p > 0.01).map(([p, s]) => `${esc(s)} (${fmt(p, 2)})`).join(', ');
    const adv = a.advice || {};
    const rec = adv.recommended;
    this.body.innerHTML = `
      <section class="ex-section"><h3>Time scales</h3><table class="kv">
        <tr><th>stability</th><td>${esc(a.stability)}</td></tr>
        <tr><th>fastest time scale T_min</th><td>${fmt(a.t_min)}</td></tr>
        <tr><th>slowest time scale T_max</th><td>${fmt(a.t_max)}</td></tr>
        <tr><th>stiffness ratio</th><td>${fmt(a.stiffness_ratio)} (${esc(a.stiffness)})</td></tr>
        <tr><th>linearised at</th><td>${esc(a.point)}, time ${fmt(a.time)}</td></tr></table></section>
      <section class="ex-section"><h3>Steady state</h3><div class="muted small">${esc(ss.status)}${ss.method ? ` by ${esc(ss.method)}` : ''}${ss.iterations != null ? `, ${ss.iterations} iteration(s)` : ''}${ss.residual != null ? `, residual ${fmt(ss.residual)}` : ''}</div>
        <table class="data-table"><thead><tr><th>state</th><th>start</th><th>steady state</th></tr></thead><tbody>${states.map((s, i) => `<tr><td>${esc(s)}</td><td>${fmt(a.start?.[i])}</td><td>${fmt(ss.x?.[i])}</td></tr>`).join('')}</tbody></table></section>
      <section class="ex-section"><h3>Eigenvalues</h3><table class="data-table eigen-table"><thead><tr><th>#</th><th>Re λ</th><th>Im λ</th><th>time constant</th><th>damping</th><th>natural frequency</th><th>main states</th></tr></thead><tbody>
        ${modes.map((m, i) => `<tr><td>${i + 1}</td><td>${fmt(m.re)}</td><td>${fmt(m.im)}</td><td>${fmt(m.time_constant)}</td><td>${fmt(m.damping)}</td><td>${fmt(m.natural_frequency)}</td><td>${topStates(m)}</td></tr>`).join('')}</tbody></table></section>
      <section class="ex-section"><h3>Stability region of ${esc(method)}</h3>${svg ? `<div class="stability-svg">${svg}</div>` : '<div class="muted">No stability region for this method.</div>'}</section>
      <section class="ex-section"><h3>Advice</h3>${rec ? `<p>Recommended: <b>${esc(rec.method)}</b>, step ${fmt(rec.step)}: ${esc(rec.reason)}</p>` : ''}
        <table class="data-table advice-table"><thead><tr><th>method</th><th>stable</th><th>largest stable step</th><th>implicit</th></tr></thead><tbody>
        ${(adv.methods || []).map((m) => `<tr class="${m.stable ? '' : 'unstable'}"><td>${esc(m.method)}</td><td>${m.stable ? 'yes' : 'no'}</td><td>${m.largest_step == null ? 'unbounded' : fmt(m.largest_step)}</td><td>${m.implicit ? 'yes' : 'no'}</td></tr>`).join('')}</tbody></table></section>
      ${(a.notes || []).length || (a.warnings || []).length ? `<section class="ex-section"><h3>Notes</h3><ul>${[...(a.notes || []), ...(a.warnings || [])].map((n) => `<li>${esc(typeof n === 'string' ? n : n.message || JSON.stringify(n))}</li>`).join('')}</ul></section>` : ''}`;
  }
}

// One row per parameter: a number field and a slider from slider_min to slider_max; every
// change calls onChange(name, value, t0) with the time of the input event.
export class ParamsView {
  constructor(root, { onChange }) {
    this.root = root;
    this.onChange = onChange;
    this.values = {};
    this.defaults = {};
    root.innerHTML = '<div class="muted">Compile a model to see its parameters.</div>';
  }

  setParameters(parameters) {
    this.values = {};
    this.defaults = {};
    for (const p of parameters) { this.values[p.name] = p.value; this.defaults[p.name] = p.value; }
    if (!parameters.length) { this.root.innerHTML = '<div class="muted">This model has no parameters to change.</div>'; return; }
    this.root.innerHTML = `<div class="params-head"><button class="params-reset">Reset</button></div>` + parameters.map((p) => {
      const lo = Number.isFinite(p.slider_min) ? p.slider_min : Math.min(0, p.value);
      const hi = Number.isFinite(p.slider_max) && p.slider_max > lo ? p.slider_max : lo + 1;
      const step = (hi - lo) / 1000;
      return `<div class="param" data-param="${esc(p.name)}" title="${esc(p.description || '')}">
        <div class="param-name">${esc(p.name)}${p.unit ? ` <span class="muted">[${esc(p.unit)}]</span>` : ''}</div>
        <input type="range" class="param-slider" min="${lo}" max="${hi}" step="${step}" value="${p.value}" aria-label="${esc(p.name)}">
        <input type="number" class="param-number" value="${p.value}" step="any" ${p.min != null ? `min="${p.min}"` : ''} ${p.max != null ? `max="${p.max}"` : ''} aria-label="${esc(p.name)} value"></div>`;
    }).join('');
    this.root.oninput = (e) => {
      const row = e.target.closest('.param');
      if (!row) return;
      const t0 = performance.now();
      const value = Number(e.target.value);
      if (!Number.isFinite(value) || e.target.value === '') return;
      const name = row.dataset.param;
      if (e.target.classList.contains('param-slider')) row.querySelector('.param-number').value = String(value);
      else row.querySelector('.param-slider').value = String(value);
      this.values[name] = value;
      this.onChange(name, value, t0);
    };
    this.root.querySelector('.params-reset').onclick = () => {
      for (const row of this.root.querySelectorAll('.param')) {
        const v = this.defaults[row.dataset.param];
        row.querySelector('.param-slider').value = v;
        row.querySelector('.param-number').value = v;
      }
      this.values = { ...this.defaults };
      this.onChange(null, null, performance.now());
    };
  }

  // The parameters that differ from the compiled model's values.
  changed() {
    const out = {};
    for (const [k, v] of Object.entries(this.values)) if (v !== this.defaults[k]) out[k] = v;
    return out;
  }
}
