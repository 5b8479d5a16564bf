// A small terminal for a pod's exec: a WebSocket speaking Kubernetes'
// v5.channel.k8s.io to /ui/exec (the dashboard proxies it to the API's
// pods/exec with the session's token), drawn in a <pre>. Each binary
// message starts with its stream: 0 stdin, 1 stdout, 2 stderr, 3 the
// error channel (a Status: Success, or Failure with the exit code), 4
// resize ({"Width": cols, "Height": rows}). The screen model is a list of
// lines with a cursor: it handles \r, \n, backspace, erase-line and
// clear-screen, and drops the other escape sequences (colours, titles),
// which is what a shell's prompt and line editing need.
export const PROTOCOL = 'v5.channel.k8s.io';
const MAX_LINES = 2000;
const enc = new TextEncoder();

export class Terminal {
  // pre shows the screen; status(kind, detail) reports 'open', 'exit'
  // (detail: {code, message}) and 'closed'.
  constructor(pre, status) {
    this.pre = pre;
    this.status = status;
    this.lines = [''];
    this.row = 0;
    this.col = 0;
    this.esc = null; // the escape sequence being read
    this.dec = new TextDecoder();
    this.frame = 0;
    this.ws = null;
    this.onKey = (e) => this.key(e);
    this.onPaste = (e) => { e.preventDefault(); this.send(e.clipboardData.getData('text')); };
    this.onResize = () => this.resize();
    pre.addEventListener('keydown', this.onKey);
    pre.addEventListener('paste', this.onPaste);
    window.addEventListener('resize', this.onResize);
  }

  connect(ns, pod, container, command) {
    const q = new URLSearchParams();
    if (container) q.set('container', container);
    for (const c of command || ['sh']) q.append('command', c);
    const url = `wss://${location.host}/ui/exec/${encodeURIComponent(ns)}/${encodeURIComponent(pod)}?${q}`;
    const ws = new WebSocket(url, [PROTOCOL]);
    ws.binaryType = 'arraybuffer';
    this.ws = ws;
    ws.onopen = () => { this.resize(); this.status('open'); };
    ws.onmessage = (ev) => {
      if (!(ev.data instanceof ArrayBuffer)) return;
      const b = new Uint8Array(ev.data);
      if (!b.length) return;
      if (b[0] === 1 || b[0] === 2) this.write(b.subarray(1));
      else if (b[0] === 3) this.status('exit', exitOf(new TextDecoder().decode(b.subarray(1))));
    };
    ws.onclose = (ev) => { this.status('closed', { opened: this.opened, code: ev.code }); this.ws = null; };
    ws.addEventListener('open', () => { this.opened = true; });
  }

  // send writes text to the process's stdin.
  send(text) {
    if (!this.ws || this.ws.readyState !== WebSocket.OPEN || !text) return;
    const data = enc.encode(text);
    const m = new Uint8Array(data.length + 1);
    m[0] = 0;
    m.set(data, 1);
    this.ws.send(m);
  }

  // resize tells the process the terminal's size in characters.
  resize() {
    if (!this.ws || this.ws.readyState !== WebSocket.OPEN) return;
    const { cols, rows } = this.size();
    const j = enc.encode(JSON.stringify({ Width: cols, Height: rows }));
    const m = new Uint8Array(j.length + 1);
    m[0] = 4;
    m.set(j, 1);
    this.ws.send(m);
  }

  size() {
    const probe = document.createElement('span');
    probe.textContent = 'MMMMMMMMMM';
    probe.style.visibility = 'hidden';
    this.pre.append(probe);
    const r = probe.getBoundingClientRect();
    probe.remove();
    const cs = getComputedStyle(this.pre);
    const w = this.pre.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
    const h = this.pre.clientHeight - parseFloat(cs.paddingTop) - parseFloat(cs.paddingBottom);
    const cw = r.width / 10 || 8, ch = r.height || 16;
    return { cols: Math.max(20, Math.floor(w / cw)), rows: Math.max(5, Math.floor(h / ch)) };
  }

  close() {
    if (this.ws) this.ws.close();
    this.ws = null;
    this.pre.removeEventListener('keydown', this.onKey);
    this.pre.removeEventListener('paste', this.onPaste);
    window.removeEventListener('resize', this.onResize);
  }

  key(e) {
    if (e.metaKey || e.altKey || (e.ctrlKey && e.shiftKey)) return; // Ctrl+Shift+C/V copy and paste
    let s = KEYS[e.key];
    if (e.ctrlKey) {
      if (e.key.length === 1 && /[a-z@[\\\]^_]/i.test(e.key)) s = String.fromCharCode(e.key.toUpperCase().charCodeAt(0) & 0x1f);
      else if (!s) return;
    } else if (s === undefined && e.key.length === 1) s = e.key;
    if (s === undefined) return; // Tab and the rest keep their meaning
    e.preventDefault();
    this.send(s);
  }

  // write feeds output bytes to the screen.
  write(bytes) {
    for (const c of this.dec.decode(bytes, { stream: true })) this.put(c);
    if (this.lines.length > MAX_LINES) {
      const drop = this.lines.length - MAX_LINES;
      this.lines.splice(0, drop);
      this.row -= drop;
    }
    if (!this.frame) this.frame = requestAnimationFrame(() => this.draw());
  }

  put(c) {
    if (this.esc !== null) return this.escape(c);
    switch (c) {
      case '\x1b': this.esc = ''; return;
      case '\r': this.col = 0; return;
      case '\n':
        this.row++;
        if (this.row >= this.lines.length) this.lines.push('');
        this.col = 0;
        return;
      case '\b': this.col = Math.max(0, this.col - 1); return;
      case '\x07': return;
      case '\t': { const n = 8 - (this.col % 8); for (let i = 0; i < n; i++) this.put(' '); return; }
    }
    if (c < ' ') return;
    const l = this.lines[this.row].padEnd(this.col);
    this.lines[this.row] = l.slice(0, this.col) + c + l.slice(this.col + 1);
    this.col++;
  }

  escape(c) {
    const e = this.esc + c;
    if (e === '(' || e === ')') { this.esc = e; return; } // a charset: one more byte
    if (e === '[' || e === ']' || (e[0] === '[' && /[0-9;?>=]$/.test(e))) { this.esc = e; return; }
    if (e[0] === ']') { // OSC: up to BEL or ESC \
      if (c === '\x07' || e.endsWith('\x1b\\')) this.esc = null; else this.esc = e;
      return;
    }
    this.esc = null;
    if (e[0] !== '[') return; // a two-byte escape: ignored
    const args = e.slice(1, -1).replace(/^[?>=]/, '').split(';').map((x) => parseInt(x, 10));
    const n = args[0] || 1;
    const l = this.lines[this.row];
    switch (c) {
      case 'K': // erase in line
        if (!args[0]) this.lines[this.row] = l.slice(0, this.col);
        else if (args[0] === 1) this.lines[this.row] = ' '.repeat(this.col) + l.slice(this.col);
        else this.lines[this.row] = '';
        break;
      case 'J':
        if (args[0] === 2 || args[0] === 3) { this.lines = ['']; this.row = 0; this.col = 0; }
        else if (!args[0]) { this.lines[this.row] = l.slice(0, this.col); this.lines.length = this.row + 1; }
        break;
      case 'C': this.col += n; break;
      case 'D': this.col = Math.max(0, this.col - n); break;
      case 'G': this.col = Math.max(0, n - 1); break;
      case 'H': if (!args[0] && !args[1]) { this.row = Math.max(0, this.lines.length - 1); this.col = 0; } break;
      case 'P': this.lines[this.row] = l.slice(0, this.col) + l.slice(this.col + n); break;
      case '@': this.lines[this.row] = l.slice(0, this.col) + ' '.repeat(n) + l.slice(this.col); break;
    }
  }

  draw() {
    this.frame = 0;
    const pre = this.pre;
    const atEnd = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 4;
    const before = this.lines.slice(0, this.row).join('\n') + (this.row ? '\n' : '');
    const line = this.lines[this.row].padEnd(this.col + 1);
    const cursor = document.createElement('span');
    cursor.className = 'cursor';
    cursor.textContent = line[this.col];
    pre.replaceChildren(before + line.slice(0, this.col), cursor, line.slice(this.col + 1) + (this.row < this.lines.length - 1 ? '\n' + this.lines.slice(this.row + 1).join('\n') : ''));
    if (atEnd) pre.scrollTop = pre.scrollHeight;
  }

  // text is the screen as plain text (for tests and copying).
  text() { return this.lines.join('\n'); }
}

const KEYS = {
  Enter: '\r', Backspace: '\x7f', Escape: '\x1b', Delete: '\x1b[3~',
  ArrowUp: '\x1b[A', ArrowDown: '\x1b[B', ArrowRight: '\x1b[C', ArrowLeft: '\x1b[D',
  Home: '\x1b[H', End: '\x1b[F', PageUp: '\x1b[5~', PageDown: '\x1b[6~',
};

// exitOf reads the error channel's Status: Success is exit 0; a Failure
// with reason NonZeroExitCode carries the code in details.causes.
export function exitOf(json) {
  let st;
  try { st = JSON.parse(json); } catch (e) { return { code: null, message: json }; }
  if (st.status === 'Success') return { code: 0, message: '' };
  const c = (st.details?.causes || []).find((x) => x.reason === 'ExitCode');
  return { code: c ? parseInt(c.message, 10) : null, message: st.message || '' };
}
