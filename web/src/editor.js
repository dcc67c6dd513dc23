// The editor: CodeMirror 6 with a highlighter of EQM/Modelica, completion of keywords, classes
// and variables (dotted names), and the server's `check` diagnostics inline (debounced after
// typing stops). It does not talk to the server by itself: the page gives it the functions.

import { EditorView, basicSetup } from 'codemirror';
import { EditorState, Compartment, Annotation, Prec } from '@codemirror/state';
import { keymap } from '@codemirror/view';
import { StreamLanguage, HighlightStyle, syntaxHighlighting } from '@codemirror/language';
import { tags } from '@lezer/highlight';
import { linter, lintGutter, setDiagnostics } from '@codemirror/lint';
import { autocompletion } from '@codemirror/autocomplete';
import { indentWithTab } from '@codemirror/commands';

// Marks the replacement of the whole text when a file is opened (not an edit of the user).
const loading = Annotation.define();

export const KEYWORDS = [
  'algorithm', 'and', 'annotation', 'block', 'break', 'class', 'connect', 'connector', 'constant',
  'constrainedby', 'der', 'discrete', 'each', 'else', 'elseif', 'elsewhen', 'encapsulated', 'end',
  'enumeration', 'equation', 'expandable', 'extends', 'external', 'false', 'final', 'flow', 'for',
  'function', 'if', 'import', 'impure', 'in', 'initial', 'inner', 'input', 'loop', 'model', 'not',
  'operator', 'or', 'outer', 'output', 'package', 'parameter', 'partial', 'potential', 'protected',
  'public', 'pure', 'record', 'redeclare', 'replaceable', 'return', 'stream', 'then', 'true', 'type',
  'when', 'while', 'within', 'stock', 'flowrate', 'auxiliary',
];
const BUILTINS = [
  'der', 'pre', 'edge', 'change', 'reinit', 'sample', 'initial', 'terminal', 'noEvent', 'smooth',
  'abs', 'sign', 'sqrt', 'sin', 'cos', 'tan', 'asin', 'acos', 'atan', 'atan2', 'sinh', 'cosh', 'tanh',
  'exp', 'log', 'log10', 'min', 'max', 'floor', 'ceil', 'integer', 'mod', 'rem', 'div', 'delay',
  'assert', 'terminate', 'homotopy', 'semiLinear', 'time', 'Real', 'Integer', 'Boolean', 'String',
];
const keywordSet = new Set(KEYWORDS.filter((k) => !['der', 'initial'].includes(k)));
const builtinSet = new Set(BUILTINS);
const typeSet = new Set(['Real', 'Integer', 'Boolean', 'String']);

// A StreamLanguage tokenizer: block comments may span lines, so the state remembers one.
export const eqmLanguage = StreamLanguage.define({
  name: 'eqm',
  startState: () => ({ inComment: false }),
  token(stream, state) {
    if (state.inComment) {
      if (stream.skipTo('*/')) {
        stream.pos += 2;
        state.inComment = false;
      } else {
        stream.skipToEnd();
      }
      return 'comment';
    }
    if (stream.eatSpace()) return null;
    if (stream.match('//')) {
      stream.skipToEnd();
      return 'comment';
    }
    if (stream.match('/*')) {
      state.inComment = true;
      return 'comment';
    }
    if (stream.peek() === '"') {
      stream.next();
      let escaped = false;
      let ch;
      while ((ch = stream.next()) != null) {
        if (ch === '"' && !escaped) break;
        escaped = !escaped && ch === '\\';
      }
      return 'string';
    }
    if (stream.match(/^(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?/)) return 'number';
    if (stream.match(/^'[^']*'/)) return 'variableName';
    if (stream.match(/^[A-Za-z_][A-Za-z0-9_]*/)) {
      const word = stream.current();
      if (typeSet.has(word)) return 'typeName';
      if (keywordSet.has(word)) return 'keyword';
      if (builtinSet.has(word)) return 'standard';
      return 'variableName';
    }
    if (stream.match(/^(:=|==|<>|<=|>=|[-+*/^=<>.,;:()[\]{}])/)) return 'operator';
    stream.next();
    return null;
  },
  languageData: { commentTokens: { line: '//', block: { open: '/*', close: '*/' } } },
  tokenTable: { standard: tags.standard(tags.function(tags.variableName)) },
});

const highlight = HighlightStyle.define([
  { tag: tags.keyword, color: '#7c3aed', fontWeight: '600' },
  { tag: tags.typeName, color: '#0f766e' },
  { tag: tags.comment, color: '#6b7280', fontStyle: 'italic' },
  { tag: tags.string, color: '#b45309' },
  { tag: tags.number, color: '#1d4ed8' },
  { tag: tags.standard(tags.function(tags.variableName)), color: '#be185d' },
  { tag: tags.operator, color: '#374151' },
]);

// Completion from the keywords and the server's symbols (given by `symbols()`, which may change
// as the file changes); a word may be dotted (`mass.flange_b.s`).
function completionSource(symbols) {
  return (context) => {
    const word = context.matchBefore(/[A-Za-z_][\w.]*/);
    if (!word || (word.from === word.to && !context.explicit)) return null;
    const { classes = [], variables = [] } = symbols() || {};
    const options = [
      ...KEYWORDS.map((label) => ({ label, type: 'keyword' })),
      ...BUILTINS.filter((b) => !keywordSet.has(b)).map((label) => ({ label, type: 'function' })),
      ...classes.map((label) => ({ label, type: 'class' })),
      ...variables.map((label) => ({ label, type: 'variable' })),
    ];
    const seen = new Set();
    return {
      from: word.from,
      options: options.filter((o) => (seen.has(o.label) ? false : seen.add(o.label))),
      validFor: /^[\w.]*$/,
    };
  };
}

// Converts a 1-based line and character column into a document offset, clamped to the text.
export function offsetOf(doc, line, col) {
  const l = doc.line(Math.min(Math.max(1, line || 1), doc.lines));
  return Math.min(l.from + Math.max(0, (col || 1) - 1), l.to);
}

// The diagnostics of `/api/check` for CodeMirror: those of the open file with a span.
export function toCmDiagnostics(doc, diagnostics, path) {
  const out = [];
  for (const d of diagnostics || []) {
    if (d.line == null || (d.file && path && !samePath(d.file, path))) continue;
    const from = offsetOf(doc, d.line, d.col);
    let to = d.end_line != null ? offsetOf(doc, d.end_line, d.end_col) : from;
    if (to <= from) to = Math.min(from + 1, doc.length);
    const severity = d.severity === 'note' ? 'info' : d.severity || 'error';
    out.push({ from, to, severity, message: `${d.code ? d.code + ': ' : ''}${d.message}`, source: d.code || 'eqm' });
  }
  return out;
}

export function samePath(a, b) {
  const norm = (p) => String(p).replace(/\\/g, '/').replace(/^\.\//, '');
  const x = norm(a);
  const y = norm(b);
  return x === y || x.endsWith('/' + y) || y.endsWith('/' + x);
}

// Builds the editor. `hooks`: onChange(text), check(text) → Promise<diagnostics for the panel
// and the gutter>, symbols() → {classes, variables}, save(), run().
export function createEditor(parent, hooks) {
  const readOnly = new Compartment();
  const view = new EditorView({
    parent,
    state: EditorState.create({
      doc: '',
      extensions: [
        basicSetup,
        EditorView.lineWrapping,
        eqmLanguage,
        syntaxHighlighting(highlight),
        lintGutter(),
        linter(async (v) => {
          const text = v.state.doc.toString();
          const diagnostics = await hooks.check(text);
          if (diagnostics === null) return [];
          return toCmDiagnostics(v.state.doc, diagnostics, hooks.path());
        }, { delay: 400 }),
        autocompletion({ override: [completionSource(hooks.symbols)], activateOnTyping: true }),
        Prec.highest(keymap.of([
          { key: 'Mod-s', preventDefault: true, run: () => { hooks.save(); return true; } },
          { key: 'Mod-Enter', preventDefault: true, run: () => { hooks.run(); return true; } },
          indentWithTab,
        ])),
        readOnly.of(EditorState.readOnly.of(false)),
        EditorView.updateListener.of((update) => {
          if (update.docChanged && !update.transactions.some((t) => t.annotation(loading))) hooks.onChange(update.state.doc.toString());
        }),
      ],
    }),
  });
  return {
    view,
    setText(text) {
      view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text }, annotations: loading.of(true) });
      view.dispatch(setDiagnostics(view.state, []));
    },
    text: () => view.state.doc.toString(),
    jumpTo(line, col) {
      const pos = offsetOf(view.state.doc, line, col);
      view.dispatch({ selection: { anchor: pos }, scrollIntoView: true, effects: EditorView.scrollIntoView(pos, { y: 'center' }) });
      view.focus();
    },
  };
}
