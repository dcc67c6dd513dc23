// The workbench page. (A first version: the page is built in later changes.)
import { EditorView, basicSetup } from 'codemirror';
import 'uplot/dist/uPlot.min.css';

new EditorView({ doc: '', extensions: [basicSetup], parent: document.getElementById('app') });
