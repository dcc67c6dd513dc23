// The teaching view: the sections of `/api/explain` (flat equations with their origins, the
// matching, the sorted assignments, loops and tearing, index reduction, initialization), and
// the bipartite equation/unknown graph drawn here as SVG whose colouring is replayed step by
// step from `graph.steps` (back, forward, play/pause). It only shows what the server computed.

import { esc } from './api.js';

export class ExplainView {
  constructor(root, { load, jump, jumpLine, findDeclaration }) {
    this.root = root;
    this.load = load;
    this.jump = jump;
    this.jumpLine = jumpLine;
    this.findDeclaration = findDeclaration;
    this.step = 0;
    this.timer = null;
    root.innerHTML = `
      <div class="view-toolbar">
        <label><input type="checkbox" class="keep-aliases"> keep aliases</label>
        <button class="explain-refresh">Explain</button>
        <span class="muted explain-status"></span>
      </div>
      <div class="explain-body"><div class="muted">Explain the open model: how the compiler matched, sorted and solved its equations.</div></div>`;
    this.body = root.querySelector('.explain-body');
    this.status = root.querySelector('.explain-status');
    this.keep = root.querySelector('.keep-aliases');
    this.keep.onchange = () => this.refresh();
    root.querySelector('.explain-refresh').onclick = () => this.refresh();
  }

  async refresh() {
    this.stop();
    this.status.textContent = 'explaining…';
    try {
      const data = await this.load({ keep_aliases: this.keep.checked });
      if (!data) { this.status.textContent = ''; return; }
      this.data = data;
      this.status.textContent = '';
      this.render();
    } catch (error) {
      this.status.textContent = '';
      this.body.innerHTML = `<div class="error-box">${esc(error.message)}${(error.diagnostics || []).map((d) => `<pre>${esc(d.rendered || d.message)}</pre>`).join('')}</div>`;
    }
  }

  render() {
    const { graph, sections = [], graph_note: note } = this.data;
    const comments = originComments(this.data.text || '');
    const flat = graph ? `<section class="ex-section"><h3>Flat equations</h3><table class="eq-table"><thead><tr><th></th><th>equation</th><th>origin</th></tr></thead><tbody>${graph.equations.map((e) => `<tr><td class="eq-label">${esc(e.label)}</td><td><code>${esc(e.text)}</code></td><td>${this.originCell(e, comments.get(e.label))}</td></tr>`).join('')}</tbody></table></section>` : '';
    const graphPart = graph ? `<section class="ex-section"><h3>Equation/unknown graph and its colouring</h3>
        <div class="step-controls"><button class="step-first" title="Start">|◀</button><button class="step-back" title="Back">◀</button>
          <button class="step-play" title="Play/pause">play</button><button class="step-fwd" title="Forward">▶</button><button class="step-last" title="End">▶|</button>
          <span class="step-counter"></span></div>
        <div class="step-text"></div>
        <div class="graph-svg"></div>
        <div class="muted small">Red: the equation solves for that unknown (matched). Blue: an edge that can no longer be chosen. The numbers give the evaluation order.</div></section>`
      : `<section class="ex-section"><h3>Equation/unknown graph</h3><div class="muted graph-note">${esc(note || 'No graph for this model.')}</div></section>`;
    this.body.innerHTML = flat + graphPart + sections.map((s) => `<section class="ex-section"><h3>${esc(s.title)}</h3><pre class="ex-text">${linkOrigins(s.text)}</pre></section>`).join('');
    this.body.onclick = (e) => {
      const a = e.target.closest('.origin');
      if (!a) return;
      e.preventDefault();
      if (a.dataset.line) this.jumpLine(+a.dataset.line);
      else this.jump(a.dataset.origin);
    };
    if (graph) {
      this.step = 0;
      this.drawGraph();
      const q = (c) => this.body.querySelector(c);
      q('.step-first').onclick = () => { this.stop(); this.setStep(0); };
      q('.step-back').onclick = () => { this.stop(); this.setStep(this.step - 1); };
      q('.step-fwd').onclick = () => { this.stop(); this.setStep(this.step + 1); };
      q('.step-last').onclick = () => { this.stop(); this.setStep(graph.steps.length); };
      q('.step-play').onclick = () => (this.timer ? this.stop() : this.play());
      this.setStep(0);
    }
  }

  // The explanation's comment (the component or connection set the equation came from)
  // links to where the equation is written (its origin: the line in the component's class, or
  // the `connect`); a row without an origin links the comment to the component's declaration
  // when the open text declares it.
  originCell(equation, comment) {
    if (equation.origin) return `<a href="#" class="origin" data-origin="${esc(equation.origin)}" title="${esc(equation.origin)}">${esc(comment || equation.origin)}</a>`;
    if (!comment) return '<span class="muted">generated</span>';
    const component = /^([A-Za-z_]\w*)(?:\.|\s|$)/.exec(comment.replace(/^unconnected flow /, ''));
    const line = component ? this.findDeclaration(component[1]) : null;
    if (line) return `<a href="#" class="origin" data-line="${line}" title="line ${line}">${esc(comment)}</a>`;
    return `<span class="muted">${esc(comment)}</span>`;
  }

  play() {
    const n = this.data.graph.steps.length;
    if (this.step >= n) this.setStep(0);
    this.body.querySelector('.step-play').textContent = 'pause';
    this.timer = setInterval(() => {
      if (this.step >= n) this.stop(); else this.setStep(this.step + 1);
    }, 800);
  }

  stop() {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    const b = this.body && this.body.querySelector('.step-play');
    if (b) b.textContent = 'play';
  }

  drawGraph() {
    const g = this.data.graph;
    const rowH = 24;
    const n = Math.max(g.equations.length, g.variables.length);
    const eqTextW = 340;
    const leftX = 40 + eqTextW;
    const rightX = leftX + 180;
    const W = rightX + 220;
    const H = 30 + n * rowH;
    const eqY = (i) => 30 + i * rowH + (n - g.equations.length) * rowH / 2;
    const varY = (i) => 30 + i * rowH + (n - g.variables.length) * rowH / 2;
    const edges = g.edges.map((e, i) => {
      const ei = this.eqIndex(e.equation);
      const vi = this.varIndex(e.variable);
      return `<line class="edge" data-edge="${i}" x1="${leftX}" y1="${eqY(ei)}" x2="${rightX}" y2="${varY(vi)}"/>`;
    }).join('');
    const eqs = g.equations.map((e, i) => `<g class="eq" data-label="${esc(e.label)}" data-number=""><title>${esc(e.text)}</title>
        <circle class="num-badge" cx="18" cy="${eqY(i)}" r="10"/><text class="num" x="18" y="${eqY(i) + 4}" text-anchor="middle"></text>
        <text x="34" y="${eqY(i) + 4}"><tspan class="eq-name">${esc(e.label)}</tspan>  ${esc(shorten(e.text, 40))}</text>
        <circle class="node" cx="${leftX}" cy="${eqY(i)}" r="4"/></g>`).join('');
    const vars = g.variables.map((v, i) => `<g class="var" data-var="${esc(v)}"><circle class="node" cx="${rightX}" cy="${varY(i)}" r="4"/><text x="${rightX + 10}" y="${varY(i) + 4}">${esc(v)}</text></g>`).join('');
    this.body.querySelector('.graph-svg').innerHTML = `<svg xmlns="http://www.w3.org/2000/svg" class="bipartite" width="${W}" height="${H}" style="max-width: 100%; height: auto" viewBox="0 0 ${W} ${H}" font-family="ui-monospace, monospace" font-size="12">
      <text x="34" y="16" class="col-head">equations</text><text x="${rightX + 10}" y="16" class="col-head">unknowns</text>${edges}${eqs}${vars}</svg>`;
  }

  eqIndex(ref) {
    if (typeof ref === 'number') return ref;
    return this.data.graph.equations.findIndex((e) => e.label === ref);
  }

  varIndex(ref) {
    if (typeof ref === 'number') return ref;
    return this.data.graph.variables.indexOf(ref);
  }

  // Shows the graph with the first `k` steps applied.
  setStep(k) {
    const g = this.data.graph;
    const steps = g.steps || [];
    this.step = Math.max(0, Math.min(k, steps.length));
    const colour = new Map();
    const numbers = new Map();
    for (const s of steps.slice(0, this.step)) {
      for (const e of s.red || []) colour.set(e, 'red');
      for (const e of s.blue || []) colour.set(e, 'blue');
      for (const [eq, num] of s.numbered || []) numbers.set(this.eqIndex(eq), num);
    }
    const svg = this.body.querySelector('.graph-svg svg');
    const current = new Set(this.step > 0 ? [...(steps[this.step - 1].red || []), ...(steps[this.step - 1].blue || [])] : []);
    svg.querySelectorAll('.edge').forEach((line) => {
      const i = +line.dataset.edge;
      line.setAttribute('class', `edge ${colour.get(i) || ''} ${current.has(i) ? 'current' : ''}`);
    });
    svg.querySelectorAll('.eq').forEach((node, i) => {
      const num = numbers.get(i);
      node.dataset.number = num ?? '';
      node.querySelector('.num').textContent = num ?? '';
      node.classList.toggle('numbered', num !== undefined);
    });
    const counter = this.body.querySelector('.step-counter');
    counter.textContent = `step ${this.step} of ${steps.length}`;
    counter.dataset.step = String(this.step);
    counter.dataset.total = String(steps.length);
    this.body.querySelector('.step-text').textContent = this.step > 0 ? steps[this.step - 1].text : (steps.length ? 'Press forward to colour the graph one step at a time.' : 'No colouring steps for this model.');
  }
}

// The comment `eqm explain` prints after each matched equation (`e1: ...  // mass (Pkg.Mass)`).
function originComments(text) {
  const out = new Map();
  for (const m of text.matchAll(/^\s+(e\d+): .*?  \/\/ (.*)$/gm)) if (!out.has(m[1])) out.set(m[1], m[2]);
  return out;
}

function shorten(text, n) {
  return text.length > n ? text.slice(0, n - 1) + '…' : text;
}

// Makes `file:line:col` origins in a section's text clickable.
function linkOrigins(text) {
  return esc(text).replace(/([\w./-]+\.(?:eqm|mo|xmile|stmx|mdl)):(\d+):(\d+)/g, (m) => `<a href="#" class="origin" data-origin="${m}">${m}</a>`);
}
