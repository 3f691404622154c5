import { httpRoutes } from '../routes';
import { httpHandler } from './handler';

/** A self-contained page (no CDN: it must work offline) that lists the operations of /openapi.json. */
const page = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Hatchery API</title>
<style>
body{font:15px/1.5 system-ui,sans-serif;max-width:960px;margin:2rem auto;padding:0 1rem;color:#222}
h2{margin-top:2rem;border-bottom:1px solid #ddd}.op{margin:1rem 0;padding:.5rem 1rem;border:1px solid #e3e3e3;border-radius:6px}
.m{display:inline-block;min-width:4.5rem;font-weight:700}.GET{color:#0a6}.POST{color:#06c}.DELETE{color:#c30}
code,pre{background:#f6f6f6;border-radius:4px;padding:.1rem .3rem}pre{padding:.6rem;overflow:auto;font-size:12px}
details summary{cursor:pointer}
</style></head><body><h1>Hatchery API</h1><p id="description"></p><div id="ops">Loading…</div>
<script>
fetch('openapi.json').then(r => r.json()).then(doc => {
  document.getElementById('description').textContent = doc.info.description;
  const ops = document.getElementById('ops'); ops.textContent = '';
  const esc = s => String(s ?? '').replace(/[&<>]/g, c => ({'&':'&amp;','<':'&lt;','>':'&gt;'}[c]));
  for (const [path, methods] of Object.entries(doc.paths)) for (const [method, op] of Object.entries(methods)) {
    const el = document.createElement('div'); el.className = 'op';
    const params = (op.parameters || []).map(p => '<li><code>' + esc(p.name) + '</code> (' + p.in + ') ' + esc(p.description) + '</li>').join('');
    el.innerHTML = '<div><span class="m ' + method.toUpperCase() + '">' + method.toUpperCase() + '</span><code>' + esc(path) + '</code>' +
      (op.security && op.security.length ? ' 🔒 bearer token' : '') + '</div><p>' + esc(op.summary) + '</p>' +
      (params ? '<ul>' + params + '</ul>' : '') +
      '<details><summary>Responses</summary><pre>' + esc(JSON.stringify(op.responses, null, 2)) + '</pre></details>';
    ops.appendChild(el);
  }
});
</script></body></html>`;

export const handler = httpHandler(httpRoutes.docs, async () => ({
  statusCode: 200,
  headers: { 'content-type': 'text/html; charset=utf-8' },
  body: page,
}));
