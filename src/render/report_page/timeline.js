// gpuscope report: the timeline overview (issue 19). Plain JavaScript, no library, no
// network. window.gpuscopeTimeline(container, data) builds the whole component inside
// `container`: toolbar, lane labels, a <canvas> drawn by level of detail, and a tooltip.
//
// `data` is render::timeline_overview_json's output (src/render/timeline_overview_json.hpp
// documents its shape): lanes with a busy-fraction density per bin (base64 bytes) and a
// bounded set of individual events as base64 varint columns.
//
// Drawing: per lane, a pyramid of density levels (level k+1 averages pairs of level k);
// each frame uses the coarsest level whose bins are no wider than a pixel and merges bins
// into pixel columns, so the cost follows the canvas width, never the event count. Where
// a lane has few enough included events in view (no more than the canvas has pixels
// across), they are drawn one by one
// over the density, several events inside one pixel merged into one mark.
//
// Names are data: every text goes in through textContent (labels, tooltip) or fillText
// (canvas), never innerHTML. Errors, ours or in a frame, are written to #gpuscope-errors.
(function () {
  'use strict';

  var ITEM_LIMIT = 20000;  // most events a lane draws one by one in a frame
  var LANE_H = 18;
  var GROUP_H = 20;
  var LABEL_W = 240;
  var AXIS_H = 22;
  var MAX_VIEW_H = 560;
  var MAX_LEVELS = 4;  // NVTX nesting levels drawn (deeper ranges share the last)
  var MIN_SPAN_NS = 100;
  var KIND_NAMES = ['CUDA API call', 'NVTX range', 'NVTX mark', 'kernel', 'memcpy', 'memset'];
  // Names of any length are shown clipped (laying out 100 kB names stalls the page): lane
  // labels to LABEL_CHARS, a tooltip's or title's name to TIP_CHARS (the tables hold it all).
  var LABEL_CHARS = 200;
  var TIP_CHARS = 1000;
  var clip = window.gpuscopeClip || function (s) { return String(s); };

  function reportError(err) {
    try {
      var box = document.getElementById('gpuscope-errors');
      if (!box) {
        box = document.createElement('div');
        box.id = 'gpuscope-errors';
        document.body.appendChild(box);
      }
      var line = document.createElement('div');
      line.textContent = 'timeline: ' + (err && err.stack ? err.stack : String(err));
      box.appendChild(line);
    } catch (ignored) { /* nothing left to report with */ }
  }

  // --- decoding -------------------------------------------------------------------
  function bytesOf(b64) {
    var s = atob(b64 || '');
    var out = new Uint8Array(s.length);
    for (var i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
    return out;
  }

  // `n` unsigned LEB128 varints (values up to 2^53 exact).
  function varints(b64, n) {
    var bytes = bytesOf(b64);
    var out = new Float64Array(n);
    var p = 0;
    for (var i = 0; i < n; i++) {
      var v = 0, mul = 1, b;
      do {
        if (p >= bytes.length) throw new Error('timeline data: column too short');
        b = bytes[p++];
        v += (b & 0x7f) * mul;
        mul *= 128;
      } while (b & 0x80);
      out[i] = v;
    }
    return out;
  }

  function decode(data) {
    var lanesIn = data.lanes || {};
    var labels = lanesIn.label || [];
    var bins = data.bins || 0;
    var lanes = [];
    var offset = 0;
    for (var i = 0; i < labels.length; i++) {
      var level = bytesOf(lanesIn.density[i]);
      var pyramid = [level];
      while (level.length > 1) {
        var up = new Uint8Array(Math.ceil(level.length / 2));
        for (var k = 0; k < up.length; k++) {
          var a = level[2 * k], b = 2 * k + 1 < level.length ? level[2 * k + 1] : a;
          up[k] = (a + b + 1) >> 1;
        }
        pyramid.push(up);
        level = up;
      }
      var count = lanesIn.items[i] || 0;
      lanes.push({
        index: i, group: lanesIn.group[i], kind: lanesIn.kind[i], label: labels[i], pid: lanesIn.pid[i],
        tid: lanesIn.tid[i], gpu: lanesIn.gpu[i], stream: lanesIn.stream[i], events: lanesIn.events[i],
        busy: lanesIn.busy_ns[i], pyramid: pyramid, first: offset, count: count, maxDur: 0
      });
      offset += count;
    }
    var it = data.items || {count: 0};
    var n = it.count || 0;
    var items = {
      n: n,
      start: varints(it.start, n), dur: varints(it.duration, n), kind: bytesOf(it.kind),
      name: varints(it.name, n), corr: new Float64Array(n), config: varints(it.config, n),
      bytes: varints(it.bytes, n)
    };
    var zz = varints(it.correlation, n), corr = 0;
    for (var j = 0; j < n; j++) {
      var z = zz[j];
      corr += (z % 2) ? -(z + 1) / 2 : z / 2;
      items.corr[j] = corr;
    }
    // Nesting depth of NVTX ranges (a lane's items come sorted by start, enclosing first):
    // the lane gets a row per level, up to MAX_LEVELS.
    items.depth = new Uint8Array(n);
    lanes.forEach(function (l) {
      var t = 0, maxDur = 0, open = [], maxDepth = 0;
      for (var q = l.first; q < l.first + l.count; q++) {
        t += items.start[q];
        items.start[q] = t;  // relative to the trace's time base
        if (items.dur[q] > maxDur) maxDur = items.dur[q];
        if (l.kind !== 'nvtx') continue;
        while (open.length && open[open.length - 1] <= t) open.pop();
        var depth = Math.min(open.length, MAX_LEVELS - 1);
        items.depth[q] = depth;
        if (depth > maxDepth) maxDepth = depth;
        if (items.kind[q] === 1) open.push(t + items.dur[q]);
      }
      l.maxDur = maxDur;
      l.levels = maxDepth + 1;
    });
    return {
      lo: data.range_begin_ns || 0, span: Math.max(1, data.span_ns || 1), bins: bins, lanes: lanes, groups: data.groups || [], items: items,
      names: data.names || [], configs: data.launch_configs || [], total: data.total_events || 0,
      included: data.included_events || 0, selection: data.selection || 'all'
    };
  }

  // --- formatting -----------------------------------------------------------------
  function fmtDur(ns) {
    var a = Math.abs(ns);
    if (a >= 1e9) return (ns / 1e9).toFixed(a >= 1e10 ? 2 : 3) + ' s';
    if (a >= 1e6) return (ns / 1e6).toFixed(a >= 1e7 ? 2 : 3) + ' ms';
    if (a >= 1e3) return (ns / 1e3).toFixed(a >= 1e4 ? 2 : 3) + ' µs';
    return Math.round(ns) + ' ns';
  }
  // A tick's time with the decimals its step needs ("8.602050 s" for 50 µs ticks).
  function fmtTick(ns, step) {
    var unit = ns >= 1e9 ? 1e9 : ns >= 1e6 ? 1e6 : ns >= 1e3 ? 1e3 : 1;
    var name = unit === 1e9 ? ' s' : unit === 1e6 ? ' ms' : unit === 1e3 ? ' µs' : ' ns';
    var decimals = Math.max(0, Math.min(9, Math.ceil(-Math.log10(step / unit) - 1e-9)));
    return (ns / unit).toFixed(decimals) + name;
  }
  // A time in the trace to the ns ("8.601634512 s"), for a tooltip.
  function fmtAt(ns) {
    if (ns >= 1e9) return (ns / 1e9).toFixed(9) + ' s';
    if (ns >= 1e6) return (ns / 1e6).toFixed(6) + ' ms';
    if (ns >= 1e3) return (ns / 1e3).toFixed(3) + ' µs';
    return Math.round(ns) + ' ns';
  }
  function fmtBytes(b) {
    if (b >= 1 << 30) return (b / (1 << 30)).toFixed(2) + ' GiB';
    if (b >= 1 << 20) return (b / (1 << 20)).toFixed(2) + ' MiB';
    if (b >= 1 << 10) return (b / (1 << 10)).toFixed(2) + ' KiB';
    return b + ' B';
  }
  function fmtInt(n) { return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ','); }
  function niceStep(raw) {
    var p = Math.pow(10, Math.floor(Math.log10(Math.max(raw, 1e-9))));
    var m = raw / p;
    return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
  }

  function hashHue(i) { return (i * 137.508) % 360; }
  var LANE_COLORS = {cuda_api: [110, 120, 140], nvtx: [60, 150, 90], gpu_stream: [50, 110, 200]};
  function itemColor(kind, name) {
    switch (kind) {
      case 0: return 'hsl(' + (210 + (name * 37) % 40) + ',18%,' + (52 + (name * 13) % 14) + '%)';
      case 1: return 'hsl(' + (90 + hashHue(name) % 90) + ',45%,48%)';
      case 2: return '#333';
      case 3: return 'hsl(' + hashHue(name) + ',58%,52%)';
      case 4: return '#e08a1e';
      default: return '#9c6b3c';
    }
  }

  var colorCache = {};
  function colorOf(kind, name) {
    var key = kind * 1e9 + name;
    var c = colorCache[key];
    if (c === undefined) c = colorCache[key] = itemColor(kind, name);
    return c;
  }

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  // --- the component --------------------------------------------------------------
  function build(container, data) {
    container.classList.add('gst-root');
    while (container.firstChild) container.removeChild(container.firstChild);
    var tl = decode(data || {});
    var head = el('div', 'gst-head');
    container.appendChild(head);
    if (tl.lanes.length === 0) {
      head.appendChild(el('div', 'gst-note', 'No CUDA API calls, NVTX ranges or GPU activity in this trace: nothing to draw.'));
      return;
    }
    var summary = tl.lanes.length + (tl.lanes.length === 1 ? ' lane, ' : ' lanes, ') + fmtInt(tl.total) +
      (tl.total === 1 ? ' event' : ' events') + ' over ' + fmtDur(tl.span) + '.';
    head.appendChild(el('div', 'gst-summary', summary));
    if (tl.included < tl.total) {
      head.appendChild(el('div', 'gst-note gst-partial',
        'Showing ' + fmtInt(tl.included) + ' of ' + fmtInt(tl.total) + ' events individually (the longest ones, ' +
        'a spread across time, and the API calls that launched the GPU work shown); the shading shows every ' +
        'event. The full detail is in the SQLite file and `gpuscope export`.'));
    }
    var bar = el('div', 'gst-toolbar');
    head.appendChild(bar);
    function button(text, title, fn) {
      var b = el('button', 'gst-btn', text);
      b.type = 'button';
      b.title = title;
      b.addEventListener('click', function () { safe(fn); });
      bar.appendChild(b);
      return b;
    }
    var range = el('span', 'gst-range', '');
    var hint = el('span', 'gst-hint', 'wheel: zoom · drag: pan · shift+wheel: scroll lanes · double-click: fit');

    var axis = el('canvas', 'gst-axis');
    var scroller = el('div', 'gst-scroller');
    var inner = el('div', 'gst-inner');
    var labelsCol = el('div', 'gst-labels');
    var canvasCol = el('div', 'gst-canvas-col');
    var canvas = el('canvas', 'gst-canvas');
    var tip = el('div', 'gst-tip');
    tip.style.display = 'none';
    var axisRow = el('div', 'gst-axis-row');
    var axisPad = el('div', 'gst-axis-pad', 'time');
    axisPad.style.width = LABEL_W + 'px';
    axisRow.appendChild(axisPad);
    axisRow.appendChild(axis);
    container.appendChild(axisRow);
    container.appendChild(scroller);
    scroller.appendChild(inner);
    inner.appendChild(labelsCol);
    inner.appendChild(canvasCol);
    canvasCol.appendChild(canvas);
    container.appendChild(tip);
    labelsCol.style.width = LABEL_W + 'px';

    // The first view: where the events are (a trace often starts long before its first
    // CUDA call: process start, imports), from the densities' first and last busy bins.
    var fit = (function () {
      var lo = Infinity, hi = -Infinity, binNs = tl.span / Math.max(1, tl.bins);
      tl.lanes.forEach(function (l) {
        var d = l.pyramid[0];
        for (var a = 0; a < d.length; a++) if (d[a]) { lo = Math.min(lo, tl.lo + a * binNs); break; }
        for (var b = d.length - 1; b >= 0; b--) if (d[b]) { hi = Math.max(hi, tl.lo + (b + 1) * binNs); break; }
      });
      if (!(hi > lo)) return {t0: tl.lo, t1: tl.lo + tl.span};
      var pad = (hi - lo) * 0.02;
      return {t0: Math.max(tl.lo, lo - pad), t1: Math.min(tl.lo + tl.span, hi + pad)};
    })();
    var view = {t0: fit.t0, t1: fit.t1};
    var collapsed = {};
    var rows = [];
    var totalH = 0;
    var hover = null;  // {lane, item}
    var pending = false;

    function layoutRows() {
      rows = [];
      var y = 0;
      while (labelsCol.firstChild) labelsCol.removeChild(labelsCol.firstChild);
      var lastGroup = -1;
      tl.lanes.forEach(function (l) {
        if (l.group !== lastGroup) {
          lastGroup = l.group;
          var g = tl.groups[l.group] || {label: '?', detail: '', gpu: false};
          var gi = l.group;
          rows.push({type: 'group', group: gi, y: y, h: GROUP_H});
          var gl = el('div', 'gst-group' + (g.gpu ? ' gst-gpu' : ''),
            (collapsed[gi] ? '▸ ' : '▾ ') + clip(g.label, LABEL_CHARS) + (g.detail ? ' — ' + clip(g.detail, LABEL_CHARS) : ''));
          gl.title = clip(g.label, TIP_CHARS) + (g.detail ? '\n' + clip(g.detail, TIP_CHARS) : '') +
            '\n(click to fold or unfold)';
          gl.style.height = GROUP_H + 'px';
          gl.addEventListener('click', function () {
            safe(function () { collapsed[gi] = !collapsed[gi]; layoutRows(); schedule(); });
          });
          labelsCol.appendChild(gl);
          y += GROUP_H;
        }
        if (collapsed[l.group]) return;
        var h = LANE_H * (l.levels || 1);
        rows.push({type: 'lane', lane: l, y: y, h: h});
        var ll = el('div', 'gst-lane', clip(l.label, LABEL_CHARS));
        ll.title = clip(l.label, TIP_CHARS) + ': ' + fmtInt(l.events) + ' events, busy ' + fmtDur(l.busy) + ' (' +
          (100 * l.busy / tl.span).toFixed(1) + ' % of the range drawn)';
        ll.style.height = h + 'px';
        labelsCol.appendChild(ll);
        y += h;
      });
      totalH = y;
      inner.style.height = totalH + 'px';
      scroller.style.height = Math.min(totalH, MAX_VIEW_H) + 'px';
    }

    function safe(fn) {
      try { fn(); } catch (e) { reportError(e); }
    }
    function schedule() {
      if (pending) return;
      pending = true;
      var raf = window.requestAnimationFrame || function (f) { return setTimeout(f, 16); };
      raf(function () { pending = false; safe(draw); });
    }

    function clampView() {
      var span = view.t1 - view.t0;
      if (span < MIN_SPAN_NS) {
        var c = (view.t0 + view.t1) / 2;
        view.t0 = c - MIN_SPAN_NS / 2;
        view.t1 = c + MIN_SPAN_NS / 2;
        span = MIN_SPAN_NS;
      }
      var lo = tl.lo, hi = tl.lo + tl.span;
      if (span > tl.span) { view.t0 = lo; view.t1 = hi; return; }
      if (view.t0 < lo) { view.t1 += lo - view.t0; view.t0 = lo; }
      if (view.t1 > hi) { view.t0 -= view.t1 - hi; view.t1 = hi; }
    }
    function zoomAt(factor, frac) {
      var span = view.t1 - view.t0;
      var at = view.t0 + span * frac;
      var ns = span * factor;
      view.t0 = at - ns * frac;
      view.t1 = view.t0 + ns;
      clampView();
      schedule();
    }
    function pan(dns) {
      view.t0 += dns;
      view.t1 += dns;
      clampView();
      schedule();
    }
    button('−', 'zoom out', function () { zoomAt(2, 0.5); });
    button('+', 'zoom in', function () { zoomAt(0.5, 0.5); });
    button('◀', 'pan left', function () { pan(-(view.t1 - view.t0) / 4); });
    button('▶', 'pan right', function () { pan((view.t1 - view.t0) / 4); });
    button('Fit', 'show where the events are', function () { view.t0 = fit.t0; view.t1 = fit.t1; schedule(); });
    button('All', 'show the whole range', function () { view.t0 = tl.lo; view.t1 = tl.lo + tl.span; schedule(); });
    bar.appendChild(range);
    bar.appendChild(hint);

    function sizeCanvas(c, w, h) {
      var dpr = window.devicePixelRatio || 1;
      var pw = Math.max(1, Math.round(w * dpr)), ph = Math.max(1, Math.round(h * dpr));
      if (c.width !== pw || c.height !== ph) {
        c.width = pw;
        c.height = ph;
        c.style.width = w + 'px';
        c.style.height = h + 'px';
      }
      var ctx = c.getContext('2d');
      ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
      return ctx;
    }
    function canvasWidth() { return Math.max(50, canvasCol.clientWidth || (container.clientWidth - LABEL_W) || 600); }

    // First item index of lane `l` whose start is ≥ t (items sorted by start within a lane).
    function lowerBound(l, t) {
      var lo = l.first, hi = l.first + l.count, s = tl.items.start;
      while (lo < hi) {
        var mid = (lo + hi) >> 1;
        if (s[mid] < t) lo = mid + 1; else hi = mid;
      }
      return lo;
    }

    function drawDensity(ctx, l, y, h, W, nsPerPx, strong) {
      var bins = tl.bins;
      if (!bins) return;
      var level = 0;
      var binNs = tl.span / bins;
      while (level + 1 < l.pyramid.length && binNs * 2 <= nsPerPx) { level++; binNs *= 2; }
      var d = l.pyramid[level];
      var c = LANE_COLORS[l.kind] || LANE_COLORS.gpu_stream;
      var v0 = view.t0 - tl.lo, v1 = view.t1 - tl.lo;  // the view, relative to the bins' origin
      var b0 = Math.max(0, Math.floor(v0 / binNs));
      var b1 = Math.min(d.length - 1, Math.floor(v1 / binNs));
      // Per pixel column: the mean of the bins in it; runs of equal shade drawn as one rect.
      var runStart = -1, runShade = 0, x = 0;
      function flushRun(xEnd) {
        if (runStart >= 0 && runShade > 0) {
          ctx.fillStyle = 'rgba(' + c[0] + ',' + c[1] + ',' + c[2] + ',' + (strong ? 0.15 + 0.85 * runShade / 16 : 0.08 + 0.3 * runShade / 16) + ')';
          ctx.fillRect(runStart, y + 1, xEnd - runStart, h - 2);
        }
      }
      if (binNs >= nsPerPx) {
        for (var b = b0; b <= b1; b++) {
          var x0 = Math.max(0, (b * binNs - v0) / nsPerPx);
          var shade = d[b] === 0 ? 0 : Math.max(1, Math.round(d[b] / 16));
          if (shade !== runShade) { flushRun(x0); runStart = x0; runShade = shade; }
        }
        flushRun(Math.min(W, ((b1 + 1) * binNs - v0) / nsPerPx));
        return;
      }
      for (x = 0; x < W; x++) {
        var ta = v0 + x * nsPerPx, tb = ta + nsPerPx;
        var ba = Math.max(0, Math.floor(ta / binNs)), bb = Math.min(d.length - 1, Math.floor((tb - 1e-9) / binNs));
        var sum = 0, cnt = 0;
        for (var q = ba; q <= bb; q++) { sum += d[q]; cnt++; }
        var v = cnt ? sum / cnt : 0;
        var sh = v === 0 ? 0 : Math.max(1, Math.round(v / 16));
        if (sh !== runShade) { flushRun(x); runStart = x; runShade = sh; }
      }
      flushRun(W);
    }

    // Events drawn one by one only while they average a pixel or more each: denser than
    // that, the density says more (and costs the canvas width, not the event count).
    function itemBudget(W) { return Math.min(ITEM_LIMIT, W); }

    // Draws the lane's items in view one by one; false when there are too many.
    function drawItems(ctx, l, y, h, W, nsPerPx) {
      if (!l.count) return false;
      var it = tl.items;
      var lo = lowerBound(l, view.t0 - l.maxDur), hi = lowerBound(l, view.t1 + 1);
      if (hi - lo > itemBudget(W)) return false;
      var lastXs = [-1, -1, -1, -1], lastColor = null;
      var labels = [];
      for (var i = lo; i < hi; i++) {
        var s = it.start[i], e = s + it.dur[i];
        if (e < view.t0) continue;
        var x0 = (s - view.t0) / nsPerPx, x1 = (e - view.t0) / nsPerPx;
        var dp = it.depth[i];
        if (x1 - x0 < 1) {
          var px = Math.floor(x0);
          if (px === lastXs[dp]) continue;  // this pixel of this level already holds an event
          lastXs[dp] = px;
          x0 = px;
          x1 = px + 1;
        } else {
          lastXs[dp] = Math.floor(x1);
        }
        var cx0 = Math.max(x0, -1), cx1 = Math.min(x1, W + 1);
        var color = colorOf(it.kind[i], it.name[i]);
        if (color !== lastColor) { ctx.fillStyle = color; lastColor = color; }
        var iy = y + it.depth[i] * LANE_H;
        if (it.kind[i] === 2) { ctx.fillRect(cx0, iy + 1, 1, LANE_H - 2); continue; }
        ctx.fillRect(cx0, iy + 2, Math.max(1, cx1 - cx0), LANE_H - 4);
        if (cx1 - cx0 > 36 && labels.length < 400) labels.push([cx0, cx1, i]);
      }
      ctx.fillStyle = '#fff';
      ctx.font = '11px sans-serif';
      ctx.textBaseline = 'middle';
      labels.forEach(function (lb) {
        var maxChars = Math.floor((lb[1] - lb[0] - 6) / 6.2);
        if (maxChars < 3) return;
        var name = String(tl.names[it.name[lb[2]]] || '');
        if (name.length > maxChars) name = name.slice(0, maxChars - 1) + '…';
        ctx.fillText(name, lb[0] + 3, y + it.depth[lb[2]] * LANE_H + LANE_H / 2);
      });
      return true;
    }

    function drawAxis(W, nsPerPx) {
      var ctx = sizeCanvas(axis, W, AXIS_H);
      ctx.clearRect(0, 0, W, AXIS_H);
      ctx.fillStyle = '#555';
      ctx.strokeStyle = '#bbb';
      ctx.font = '11px sans-serif';
      ctx.textBaseline = 'top';
      var step = niceStep(nsPerPx * 110);
      var first = Math.ceil(view.t0 / step) * step;
      for (var t = first; t <= view.t1; t += step) {
        var x = Math.round((t - view.t0) / nsPerPx) + 0.5;
        ctx.beginPath();
        ctx.moveTo(x, AXIS_H - 6);
        ctx.lineTo(x, AXIS_H);
        ctx.stroke();
        ctx.fillText(fmtTick(t, step), x + 2, 2);
      }
    }

    function draw() {
      var W = canvasWidth();
      var H = Math.min(totalH, MAX_VIEW_H);
      axis.style.width = W + 'px';
      var nsPerPx = (view.t1 - view.t0) / W;
      drawAxis(W, nsPerPx);
      var ctx = sizeCanvas(canvas, W, H);
      ctx.clearRect(0, 0, W, H);
      var top = scroller.scrollTop;
      canvas.style.top = '0px';
      rows.forEach(function (r) {
        var y = r.y - top;
        if (y + r.h < 0 || y > H) return;
        if (r.type === 'group') {
          ctx.fillStyle = '#eef1f5';
          ctx.fillRect(0, y, W, r.h);
          return;
        }
        var l = r.lane;
        // Items over a faint density (the events left out still show); density alone otherwise.
        var drawn = false;
        if (l.count > 0 && lowerBound(l, view.t1 + 1) - lowerBound(l, view.t0 - l.maxDur) <= itemBudget(W)) {
          if (l.count < l.events) drawDensity(ctx, l, y, r.h, W, nsPerPx, false);
          drawn = drawItems(ctx, l, y, r.h, W, nsPerPx);
        }
        if (!drawn) drawDensity(ctx, l, y, r.h, W, nsPerPx, true);
        if (hover && hover.lane === l && hover.item >= 0) {
          var s = tl.items.start[hover.item];
          var x0 = (s - view.t0) / nsPerPx, x1 = (s + tl.items.dur[hover.item] - view.t0) / nsPerPx;
          ctx.strokeStyle = '#000';
          ctx.lineWidth = 1.5;
          var hy = y + tl.items.depth[hover.item] * LANE_H;
          ctx.strokeRect(Math.max(-2, x0) - 1, hy + 1, Math.min(W + 2, x1) - Math.max(-2, x0) + 2, LANE_H - 2);
        }
        ctx.fillStyle = '#e6e6e6';
        ctx.fillRect(0, y + r.h - 1, W, 1);
      });
      range.textContent = fmtDur(view.t0) + ' – ' + fmtDur(view.t1) + ' (' + fmtDur(view.t1 - view.t0) + ' shown)';
    }

    // --- hover ----------------------------------------------------------------------
    var launchIndex = null;  // "pid:correlation" → item of the API call
    function launchOf(pid, corr) {
      if (!launchIndex) {
        launchIndex = new Map();
        tl.lanes.forEach(function (l) {
          if (l.kind !== 'cuda_api') return;
          for (var i = l.first; i < l.first + l.count; i++) {
            var key = l.pid + ':' + tl.items.corr[i];
            if (tl.items.corr[i] !== 0 && !launchIndex.has(key)) launchIndex.set(key, i);
          }
        });
      }
      var v = launchIndex.get(pid + ':' + corr);
      return v === undefined ? -1 : v;
    }

    function rowAt(y) {
      var yy = y + scroller.scrollTop;
      for (var i = 0; i < rows.length; i++) {
        if (yy >= rows[i].y && yy < rows[i].y + rows[i].h) return {row: rows[i], level: Math.floor((yy - rows[i].y) / LANE_H)};
      }
      return null;
    }

    // The included event under time t (± tolerance) on lane l at nesting `level` (the
    // nearest, then the shortest), else any under t; -1 when none.
    function itemAt(l, t, tol, level) {
      if (!l.count) return -1;
      var it = tl.items;
      var any = -1;
      var hi = lowerBound(l, t + tol + 1);
      var best = -1, bestDur = Infinity, bestDist = Infinity;
      for (var i = hi - 1; i >= l.first; i--) {
        var s = it.start[i];
        if (s < t - tol - l.maxDur) break;
        var e = s + it.dur[i];
        if (e + tol < t) continue;
        var dist = t < s ? s - t : t > e ? t - e : 0;
        if (any < 0) any = i;
        if (it.depth[i] !== level) continue;
        if (dist < bestDist || (dist === bestDist && it.dur[i] < bestDur)) {
          best = i; bestDur = it.dur[i]; bestDist = dist;
        }
      }
      return best >= 0 ? best : any;
    }

    function tipLine(label, value) {
      var d = el('div', 'gst-tip-line');
      if (label) d.appendChild(el('span', 'gst-tip-key', label + ': '));
      d.appendChild(el('span', 'gst-tip-val', value));
      tip.appendChild(d);
    }

    function showTip(ev, l, i, t, nsPerPx) {
      while (tip.firstChild) tip.removeChild(tip.firstChild);
      var g = tl.groups[l.group] || {label: ''};
      var it = tl.items;
      if (i >= 0) {
        var kind = it.kind[i];
        tip.appendChild(el('div', 'gst-tip-name', clip(tl.names[it.name[i]] || '', TIP_CHARS)));
        tipLine('', KIND_NAMES[kind] || 'event');
        tipLine('start', fmtAt(it.start[i]));
        if (kind !== 2) tipLine('duration', fmtDur(it.dur[i]));
        if (kind === 3 && it.config[i] > 0) {
          var c = tl.configs[it.config[i] - 1] || [];
          tipLine('grid', '(' + c.slice(0, 3).join(', ') + ')');
          tipLine('block', '(' + c.slice(3, 6).join(', ') + ')');
        }
        if ((kind === 4 || kind === 5) && it.bytes[i] > 0) {
          tipLine('size', fmtBytes(it.bytes[i]) + (it.dur[i] > 0 ? ' (' + (it.bytes[i] / it.dur[i]).toFixed(2) + ' GB/s)' : ''));
        }
        if (kind >= 3) {
          tipLine('stream', l.stream + ' on ' + clip(g.label, LABEL_CHARS) + (l.pid ? ' (pid ' + l.pid + ')' : ''));
          if (it.corr[i] !== 0) {
            var a = launchOf(l.pid, it.corr[i]);
            if (a >= 0) {
              tipLine('launched by', clip(tl.names[it.name[a]] || '', LABEL_CHARS) + ' (correlation ' + it.corr[i] + ', ' +
                fmtDur(it.dur[a]) + ', at ' + fmtAt(it.start[a]) + ')');
            } else {
              tipLine('launched by', 'correlation ' + it.corr[i] + ' (the API call is not among the events included)');
            }
          }
        } else {
          tipLine('thread', clip(l.label, LABEL_CHARS) + ' in ' + clip(g.label, LABEL_CHARS));
          if (kind === 0 && it.corr[i] !== 0) tipLine('correlation', String(it.corr[i]));
        }
      } else {
        // No included event here: the density bin.
        var binNs = tl.span / Math.max(1, tl.bins);
        var level = 0, lb = binNs;
        while (level + 1 < l.pyramid.length && lb * 2 <= nsPerPx) { level++; lb *= 2; }
        var d = l.pyramid[level][Math.floor((t - tl.lo) / lb)] || 0;
        tip.appendChild(el('div', 'gst-tip-name', clip(l.label, TIP_CHARS)));
        tipLine('group', clip(g.label, LABEL_CHARS));
        tipLine('busy', (100 * d / 255).toFixed(0) + ' % of ' + fmtDur(lb) + ' around ' + fmtAt(tl.lo + Math.floor((t - tl.lo) / lb) * lb));
        tipLine('lane', fmtInt(l.events) + ' events, busy ' + fmtDur(l.busy) + ' in all');
      }
      tip.style.display = 'block';
      var rect = container.getBoundingClientRect();
      var x = ev.clientX - rect.left + 14, y = ev.clientY - rect.top + 14;
      var maxX = container.clientWidth - tip.offsetWidth - 4;
      tip.style.left = Math.max(0, Math.min(x, maxX)) + 'px';
      tip.style.top = y + 'px';
    }

    var drag = null;
    canvas.addEventListener('mousedown', function (ev) {
      drag = {x: ev.clientX, t0: view.t0, t1: view.t1, moved: false};
      ev.preventDefault();
    });
    window.addEventListener('mouseup', function () { drag = null; canvas.style.cursor = ''; });
    window.addEventListener('mousemove', function (ev) {
      safe(function () {
        if (!drag) return;
        var W = canvasWidth();
        var dx = ev.clientX - drag.x;
        if (Math.abs(dx) > 2) drag.moved = true;
        var ns = dx * (drag.t1 - drag.t0) / W;
        view.t0 = drag.t0 - ns;
        view.t1 = drag.t1 - ns;
        clampView();
        canvas.style.cursor = 'grabbing';
        tip.style.display = 'none';
        schedule();
      });
    });
    canvas.addEventListener('mousemove', function (ev) {
      safe(function () {
        if (drag) return;
        var rect = canvas.getBoundingClientRect();
        var W = canvasWidth();
        var nsPerPx = (view.t1 - view.t0) / W;
        var at = rowAt(ev.clientY - rect.top);
        var r = at && at.row;
        var t = view.t0 + (ev.clientX - rect.left) * nsPerPx;
        var prev = hover;
        if (!r || r.type !== 'lane') {
          hover = null;
          tip.style.display = 'none';
        } else {
          var i = itemAt(r.lane, t, 3 * nsPerPx, at.level);
          hover = {lane: r.lane, item: i};
          showTip(ev, r.lane, i, t, nsPerPx);
        }
        if ((prev && prev.item) !== (hover && hover.item) || (prev && prev.lane) !== (hover && hover.lane)) schedule();
      });
    });
    canvas.addEventListener('mouseleave', function () {
      tip.style.display = 'none';
      if (hover) { hover = null; schedule(); }
    });
    canvas.addEventListener('wheel', function (ev) {
      safe(function () {
        if (ev.shiftKey) return;  // the browser scrolls the lanes
        ev.preventDefault();
        var rect = canvas.getBoundingClientRect();
        var W = canvasWidth();
        if (Math.abs(ev.deltaX) > Math.abs(ev.deltaY)) {
          pan(ev.deltaX * (view.t1 - view.t0) / W);
          return;
        }
        var unit = ev.deltaMode === 1 ? 16 : ev.deltaMode === 2 ? 400 : 1;
        zoomAt(Math.exp(ev.deltaY * unit * 0.002), (ev.clientX - rect.left) / W);
      });
    }, {passive: false});
    canvas.addEventListener('dblclick', function () { view.t0 = fit.t0; view.t1 = fit.t1; schedule(); });
    scroller.addEventListener('scroll', function () { tip.style.display = 'none'; schedule(); });
    if (window.ResizeObserver) new ResizeObserver(function () { schedule(); }).observe(container);
    else window.addEventListener('resize', schedule);

    layoutRows();
    draw();
  }

  window.gpuscopeTimeline = function (container, data) {
    try {
      build(container, data);
    } catch (e) {
      reportError(e);
    }
  };
})();
