// gpuscope report page: builds the page from the JSON in #gpuscope-data
// (render/html_report.hpp documents its shape) with Chart.js for the charts and
// window.gpuscopeTimeline (timeline.js) for the timeline. No network, no library but
// Chart.js (inlined before this file).
//
// Names are data: every text from the trace goes into the DOM through textContent or
// setAttribute, never innerHTML. Every element showing a number of a Report carries
// data-report, data-row, data-col and data-value (the raw value) for the browser test;
// its text is the number formatted with its unit (or the unit is in the column header).
(function () {
  'use strict';

  function reportError(err) {
    var text = err && err.stack ? err.stack : String(err);
    if (window.gpuscopeReportError) {
      window.gpuscopeReportError('page: ' + text);
    } else {
      var box = document.getElementById('gpuscope-errors');
      if (box) box.appendChild(document.createTextNode('page: ' + text + '\n'));
    }
  }

  // Runs one part of the page; an error in it is shown and the other parts still run.
  function part(name, fn) {
    try {
      fn();
    } catch (e) {
      reportError(name + ': ' + (e && e.stack ? e.stack : String(e)));
    }
  }

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }

  function byId(id) {
    return document.getElementById(id);
  }

  // ---- long names ----
  // A name from the trace may be any length (a C++ template instantiation of kilobytes, or a
  // trace edited by another tool). Laying out whole names of 5-100 kB in table cells made the
  // page take minutes to render, so the page shows the first characters of a long text, with
  // a button that shows the whole of it (kept in the page data, not copied into the DOM).
  var NAME_CHARS = 1000;  // a table cell, a label in the page's text
  var NOTE_CHARS = 2000;  // a note or diagnosis: a sentence that may quote names
  var CHART_CHARS = 60;   // a label on a chart's axis or legend
  var TIP_CHARS = 300;    // a chart's tooltip
  var clip = window.gpuscopeClip;  // page.html
  // Sets `node`'s text to `text`; longer than `limit`: clipped, and a button shows all of it.
  function setText(node, text, limit) {
    text = String(text);
    if (text.length <= limit) {
      node.textContent = text;
      return node;
    }
    var shown = document.createTextNode(clip(text, limit));
    var toggle = el('button', 'show-all');
    toggle.type = 'button';
    var open = false;
    var label = function () {
      toggle.textContent = open ? 'show less' : 'show all ' + group(String(text.length)) + ' characters';
    };
    label();
    toggle.addEventListener('click', function (ev) {
      ev.stopPropagation();
      open = !open;
      shown.data = open ? text : clip(text, limit);
      label();
    });
    node.textContent = '';
    node.appendChild(shown);
    node.appendChild(toggle);
    return node;
  }

  // ---- numbers and units (the spellings of core/units.hpp) ----
  function sig3(x) {
    if (!isFinite(x)) return '-';
    if (x === 0) return '0';
    return String(Number(x.toPrecision(3)));
  }
  function group(s) {
    var neg = s.charAt(0) === '-';
    if (neg) s = s.slice(1);
    var dot = s.indexOf('.');
    var ip = dot < 0 ? s : s.slice(0, dot);
    var fp = dot < 0 ? '' : s.slice(dot);
    var out = '';
    while (ip.length > 3) {
      out = ',' + ip.slice(-3) + out;
      ip = ip.slice(0, -3);
    }
    return (neg ? '-' : '') + ip + out + fp;
  }
  function duration(ns) {
    if (ns === null || ns === undefined || !isFinite(ns)) return '-';
    var a = Math.abs(ns);
    if (a >= 1e9) return sig3(ns / 1e9) + ' s';
    if (a >= 1e6) return sig3(ns / 1e6) + ' ms';
    if (a >= 1e3) return sig3(ns / 1e3) + ' \u00b5s';
    return sig3(ns) + ' ns';
  }
  function memorySize(bytes) {
    if (bytes === null || !isFinite(bytes)) return '-';
    var units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
    var i = 0;
    var v = bytes;
    while (Math.abs(v) >= 1024 && i < units.length - 1) {
      v /= 1024;
      i++;
    }
    return sig3(v) + ' ' + units[i];
  }
  function percent(p) {
    if (p === null || !isFinite(p)) return '-';
    return (Math.abs(p) >= 10 ? String(Math.round(p)) : String(Number(p.toFixed(1)))) + ' %';
  }
  // A value in `unit` with its unit, as the headline shows it.
  function withUnit(v, unit) {
    if (v === null || v === undefined) return '-';
    if (typeof v !== 'number') return String(v);
    if (unit === 'ns') return duration(v);
    if (unit === 'us') return duration(v * 1e3);
    if (unit === 'ms') return duration(v * 1e6);
    if (unit === 's') return duration(v * 1e9);
    if (unit === '%') return percent(v);
    if (unit === 'bytes' || unit === 'B') return memorySize(v);
    return sig3(v) + (unit ? ' ' + unit : '');
  }
  // Decimals of a real column, from its largest magnitude (render/report_render.hpp's rule).
  function realDecimals(rows, c) {
    var m = 0;
    for (var i = 0; i < rows.length; i++) {
      var v = rows[i][c];
      if (typeof v === 'number' && isFinite(v)) m = Math.max(m, Math.abs(v));
    }
    if (m >= 1000) return 1;
    if (m >= 10) return 2;
    if (m >= 0.1 || m === 0) return 3;
    var d = 2 - Math.floor(Math.log10(m));
    return Math.min(9, d);
  }
  function cellText(v, col, decimals) {
    if (v === null || v === undefined) return '-';
    if (col.type === 'text') return String(v);
    if (col.type === 'integer') return col.identifier ? String(v) : group(String(v));
    return group(v.toFixed(decimals));
  }
  function header(col) {
    return col.unit ? col.name + ' (' + col.unit + ')' : col.name;
  }
  // colIndex: the column's index in the Report (two columns may share a name: step_sum's
  // "GPU Busy" in ms and in %); -1 for numbers that are not a Report's.
  function numberAttrs(node, report, row, col, value, colIndex) {
    node.setAttribute('data-report', report);
    node.setAttribute('data-row', String(row));
    node.setAttribute('data-col', col);
    node.setAttribute('data-col-index', String(colIndex === undefined ? -1 : colIndex));
    node.setAttribute('data-value', value === null || value === undefined ? 'null' : String(value));
  }

  var COLORS = {
    kernel: '#3b6fd8',
    copy: '#e08a1e',
    memset: '#8b5cc7',
    idle: '#c9ced6',
    steady: '#3b6fd8',
    warmup: '#9aa3b0',
    outlier: '#d0342c'
  };
  var SERIES_COLORS = ['#3b6fd8', '#e08a1e', '#2a9d5c', '#8b5cc7', '#d0342c', '#1b9aaa', '#b5651d', '#6b7a8f'];

  function chartBox(parent, height) {
    var box = el('div', 'chart-box');
    box.style.height = height + 'px';
    var canvas = document.createElement('canvas');
    box.appendChild(canvas);
    parent.appendChild(box);
    return canvas;
  }

  function baseOptions() {
    return {
      animation: false,
      responsive: true,
      maintainAspectRatio: false,
      plugins: { legend: { position: 'top' } }
    };
  }

  // ---- a Report as a sortable, filterable table ----
  var ROWS_SHOWN = 100;

  function reportTable(parent, report, opts) {
    opts = opts || {};
    var cols = report.columns;
    var rows = report.rows;
    var decimals = cols.map(function (c, i) {
      return c.type === 'real' ? realDecimals(rows, i) : 0;
    });
    var order = rows.map(function (r, i) {
      return i;
    });
    var shown = order;
    var limit = opts.limit || ROWS_SHOWN;
    var sortCol = -1;
    var sortDesc = false;

    var tools = el('div', 'table-tools');
    var filter = null;
    if (!opts.noFilter) {
      filter = document.createElement('input');
      filter.type = 'search';
      filter.placeholder = 'filter rows (text in any column)';
      filter.setAttribute('aria-label', 'filter ' + report.name);
      tools.appendChild(filter);
    }
    var count = el('span', 'row-count');
    tools.appendChild(count);
    var more = el('button', null, 'show all rows');
    tools.appendChild(more);
    parent.appendChild(tools);

    var table = el('table', 'report');
    table.setAttribute('data-report-table', report.name);
    var thead = document.createElement('thead');
    var htr = document.createElement('tr');
    var ths = cols.map(function (c, i) {
      var th = el('th', null, header(c));
      th.title = 'sort by ' + c.name;
      th.addEventListener('click', function () {
        if (sortCol === i) {
          sortDesc = !sortDesc;
        } else {
          sortCol = i;
          sortDesc = c.type !== 'text' && !c.identifier;  // quantities: largest first
        }
        refresh();
      });
      htr.appendChild(th);
      return th;
    });
    thead.appendChild(htr);
    table.appendChild(thead);
    var tbody = document.createElement('tbody');
    table.appendChild(tbody);
    parent.appendChild(table);

    function compare(a, b) {
      var x = rows[a][sortCol];
      var y = rows[b][sortCol];
      if (x === y) return a - b;
      if (x === null || x === undefined) return 1;  // NULL last either way
      if (y === null || y === undefined) return -1;
      var r = typeof x === 'number' && typeof y === 'number' ? x - y : String(x) < String(y) ? -1 : 1;
      return sortDesc ? -r : r;
    }

    function refresh() {
      var q = filter ? filter.value.toLowerCase() : '';
      shown = order.filter(function (i) {
        if (!q) return true;
        var r = rows[i];
        for (var c = 0; c < r.length; c++)
          if (r[c] !== null && String(r[c]).toLowerCase().indexOf(q) >= 0) return true;
        return false;
      });
      if (sortCol >= 0) shown.sort(compare);
      ths.forEach(function (th, i) {
        th.className = i === sortCol ? (sortDesc ? 'sorted-desc' : 'sorted-asc') : '';
      });
      while (tbody.firstChild) tbody.removeChild(tbody.firstChild);
      var n = Math.min(shown.length, limit);
      for (var k = 0; k < n; k++) {
        var i = shown[k];
        var tr = document.createElement('tr');
        if (opts.rowClass) tr.className = opts.rowClass(rows[i]);
        for (var c = 0; c < cols.length; c++) {
          var v = rows[i][c];
          var td = el('td', cols[c].type === 'text' ? 'text' : 'num');
          setText(td, cellText(v, cols[c], decimals[c]), NAME_CHARS);
          if (cols[c].type !== 'text') numberAttrs(td, report.name, i, cols[c].name, v, c);
          tr.appendChild(td);
        }
        tbody.appendChild(tr);
      }
      count.textContent = 'showing ' + n + ' of ' + shown.length + ' rows' +
          (shown.length !== rows.length ? ' (' + rows.length + ' before the filter)' : '');
      more.style.display = shown.length > limit ? '' : 'none';
    }
    more.addEventListener('click', function () {
      limit = Infinity;
      refresh();
    });
    if (filter) filter.addEventListener('input', refresh);
    refresh();
    notesList(parent, report.notes);
  }

  function notesList(parent, notes) {
    if (!notes || !notes.length) return;
    var ul = el('ul', 'notes');
    notes.forEach(function (n) {
      var prefix = n.level === 'warning' ? 'WARNING: ' : n.level === 'data_loss' ? 'DATA LOSS: ' : 'note: ';
      ul.appendChild(setText(el('li', n.level), prefix + n.text, NOTE_CHARS));
    });
    parent.appendChild(ul);
  }

  function explain(parent, text) {
    parent.appendChild(el('p', 'explain', text));
  }

  // The page is built: how long that took, in ms since the navigation started (parsing,
  // scripts, style and layout), as data-rendered-ms on <html>, for a reader and the browser test.
  function rendered() {
    void document.body.offsetHeight;  // style and layout now, not after this script
    document.documentElement.setAttribute('data-rendered-ms', performance.now().toFixed(0));
  }

  // The page data hold each name once, in data.strings (render/html_report.hpp): a Report's
  // text cells, a step's label, a roofline point's kernel and the timeline's names are indexes
  // into it. They are put back in place here (the same string, not a copy), so the rest of the
  // page reads names as it always did.
  function resolveNames(data) {
    var strings = data.strings || [];
    var name = function (v) {
      return typeof v === 'number' ? strings[v] : v;
    };
    data.headline.concat(data.tables).forEach(function (r) {
      r.columns.forEach(function (c, i) {
        if (c.type !== 'text') return;
        r.rows.forEach(function (row) {
          if (i < row.length) row[i] = name(row[i]);
        });
      });
    });
    data.steps.forEach(function (s) {
      s.label = name(s.label);
    });
    data.roofline.points.forEach(function (p) {
      p.kernel = name(p.kernel);
    });
    if (data.timeline) data.timeline.names = data.timeline.names.map(name);
  }

  // ---- the page ----
  var data;
  try {
    data = JSON.parse(byId('gpuscope-data').textContent);
    resolveNames(data);
  } catch (e) {
    reportError('the page data cannot be read: ' + e);
    return;
  }

  part('title', function () {
    byId('page-title').textContent = 'gpuscope report: ' + data.trace;
    byId('page-subtitle').textContent = 'whole-run wall time ' + duration(data.wall_ns) + ' \u00b7 made by ' + data.generator +
        ' \u00b7 every number comes from the trace database (gpuscope stats gives the same)';
    byId('page-footer').textContent = 'Made by ' + data.generator +
        ' from ' + data.trace + '. Full detail: the SQLite trace itself, and gpuscope export for ui.perfetto.dev.';
  });

  // gpuscope diff --html: the trace_diff Report, its headline and every row.
  function renderDiff() {
    var r = data.tables[0];
    ['where', 'timeline', 'counters'].forEach(function (id) {
      byId(id).style.display = 'none';
    });
    Array.prototype.forEach.call(byId('page-nav').querySelectorAll('a'), function (a) {
      var h = a.getAttribute('href');
      if (h !== '#headline' && h !== '#tables') a.style.display = 'none';
    });
    byId('page-title').textContent = 'gpuscope diff: ' + data.trace;
    byId('page-subtitle').textContent = 'what changed from A to B per kernel name, NVTX range, PyTorch operator and ' +
        'step \u00b7 made by ' + data.generator + ' \u00b7 the numbers of gpuscope diff --format json';
    var head = byId('headline');
    explain(head, 'A change is called faster or slower only beyond the spread the repeated instances show (and at ' +
        'least the floor); kernels in one trace only are added or deleted. docs/report.md and gpuscope diff --help.');
    var verdict = -1;
    var category = -1;
    r.columns.forEach(function (c, i) {
      if (c.name === 'Verdict') verdict = i;
      if (c.name === 'Category') category = i;
    });
    var counts = {};
    r.rows.forEach(function (row) {
      var k = category >= 0 ? row[category] : '';
      counts[k] = (counts[k] || 0) + 1;
    });
    var cards = el('div', 'cards');
    ['increased', 'decreased', 'added', 'deleted', 'unchanged', 'unknown'].forEach(function (k) {
      var card = el('div', 'card verdict-' + k);
      card.appendChild(el('div', 'label', k));
      card.appendChild(el('div', 'value', String(counts[k] || 0) + ' rows'));
      cards.appendChild(card);
    });
    head.appendChild(cards);
    var list = el('ul', 'diagnoses');
    r.notes.forEach(function (n) {
      list.appendChild(setText(el('li', n.level), n.text, NOTE_CHARS));
    });
    head.appendChild(list);
    var sec = byId('tables');
    sec.querySelector('h2').textContent = 'What changed';
    var div = el('div', 'report-section');
    div.appendChild(el('h3', null, r.title + ' (' + r.name + ')'));
    reportTable(div, r, {
      rowClass: function (row) {
        var c = category >= 0 ? row[category] : '';
        var v = verdict >= 0 ? row[verdict] : '';
        return 'verdict-' + (c === 'added' || c === 'deleted' ? c : v);
      }
    });
    sec.appendChild(div);
    var left = byId('left-out');
    left.style.display = 'none';
  }
  if (data.kind === 'diff') {
    part('diff', renderDiff);
    rendered();
    return;
  }

  part('headline', function () {
    var sec = byId('headline');
    var top = null;
    var topKernels = null;
    data.headline.forEach(function (r) {
      if (r.name === 'top') top = r;
      if (r.name === 'top_kernels') topKernels = r;
    });
    if (!top) throw new Error('no "top" report in the page data');
    explain(sec, 'The same facts as `gpuscope stats -r top`: the numbers that say where the time goes, ' +
        'and each diagnosis that fired with its evidence.');
    var cards = el('div', 'cards');
    var row = top.rows.length ? top.rows[0] : null;
    top.columns.forEach(function (c, i) {
      var card = el('div', 'card');
      card.appendChild(el('div', 'label', c.name));
      var v = row ? row[i] : null;
      var value = setText(el('div', 'value'), withUnit(v, c.unit), CHART_CHARS);
      if (row) numberAttrs(value, 'top', 0, c.name, v, i);
      card.appendChild(value);
      cards.appendChild(card);
    });
    var losses = top.notes.filter(function (n) {
      return n.level === 'data_loss';
    });
    var lossCard = el('div', 'card' + (losses.length ? ' loss' : ''));
    lossCard.appendChild(el('div', 'label', 'Data loss'));
    lossCard.appendChild(el('div', 'value', losses.length ? losses.length + ' kind(s)' : 'none recorded'));
    cards.appendChild(lossCard);
    sec.appendChild(cards);

    var list = el('ul', 'diagnoses');
    top.notes.forEach(function (n) {
      var li = el('li', n.level);
      var colon = n.text.indexOf(':');
      if (n.text.length > NOTE_CHARS) {
        setText(li, (n.level === 'data_loss' ? 'DATA LOSS: ' : '') + n.text, NOTE_CHARS);
      } else if (n.level === 'warning' && colon > 0) {
        li.appendChild(el('span', 'what', n.text.slice(0, colon + 1)));
        li.appendChild(document.createTextNode(n.text.slice(colon + 1)));
      } else {
        var prefix = n.level === 'data_loss' ? 'DATA LOSS: ' : '';
        li.appendChild(document.createTextNode(prefix + n.text));
      }
      list.appendChild(li);
    });
    sec.appendChild(list);
    if (topKernels) {
      sec.appendChild(el('h3', null, topKernels.title + ' (' + topKernels.name + ')'));
      reportTable(sec, topKernels, { noFilter: true });
    }
  });

  part('per-GPU time', function () {
    var sec = byId('where');
    sec.appendChild(el('h3', null, 'Per GPU: kernels, copies, memsets, idle'));
    if (!data.gpus.length) {
      explain(sec, 'No GPU activity in the trace.');
      return;
    }
    var span = data.gpus[0].wall_ns;
    explain(sec, 'Each bar is one GPU\'s wall time (' + duration(span) + (data.gpus_scope ? ': ' + data.gpus_scope : '') +
        '), split into time when a kernel ran, when only a copy ran, when only a memset ran, and idle. ' +
        'Kernels + copies + memsets is gpu_util\'s Busy Time' + (data.gpus_scope ? ' over the same span.' : '.'));
    var labels = data.gpus.map(function (g) {
      return clip('GPU ' + g.gpu + (g.name ? ' (' + g.name + ')' : ''), CHART_CHARS);
    });
    var parts = [['kernels', 'kernel_ns', COLORS.kernel], ['copies', 'copy_ns', COLORS.copy],
      ['memsets', 'memset_ns', COLORS.memset], ['idle', 'idle_ns', COLORS.idle]];
    var canvas = chartBox(sec, 70 + 46 * data.gpus.length);
    var opts = baseOptions();
    opts.indexAxis = 'y';
    opts.scales = {
      x: { stacked: true, title: { display: true, text: 'time (ms)' }, min: 0 },
      y: { stacked: true }
    };
    opts.plugins.tooltip = {
      callbacks: {
        title: function (items) {
          var g = data.gpus[items[0].dataIndex];
          return clip('GPU ' + g.gpu + (g.name ? ' (' + g.name + ')' : ''), TIP_CHARS);
        },
        label: function (ctx) {
          var g = data.gpus[ctx.dataIndex];
          var ns = g[parts[ctx.datasetIndex][1]];
          return parts[ctx.datasetIndex][0] + ': ' + duration(ns) + ' (' + percent(g.wall_ns ? 100 * ns / g.wall_ns : null) + ')';
        }
      }
    };
    new Chart(canvas, {
      type: 'bar',
      data: {
        labels: labels,
        datasets: parts.map(function (p) {
          return {
            label: p[0],
            backgroundColor: p[2],
            data: data.gpus.map(function (g) {
              return g[p[1]] / 1e6;
            })
          };
        })
      },
      options: opts
    });
    var table = el('table', 'report');
    var tr = document.createElement('tr');
    ['GPU', 'Name', 'Kernels', 'Copies', 'Memsets', 'Idle', 'Wall'].forEach(function (h) {
      tr.appendChild(el('th', null, h));
    });
    table.appendChild(tr);
    data.gpus.forEach(function (g, i) {
      var r = document.createElement('tr');
      r.appendChild(el('td', 'num', String(g.gpu)));
      r.appendChild(setText(el('td', 'text'), g.name || '-', NAME_CHARS));
      [['kernel_ns', 'Kernels'], ['copy_ns', 'Copies'], ['memset_ns', 'Memsets'], ['idle_ns', 'Idle'],
        ['wall_ns', 'Wall']].forEach(function (p) {
        var v = g[p[0]];
        var td = el('td', 'num', duration(v) + (p[0] !== 'wall_ns' && g.wall_ns ? ' (' + percent(100 * v / g.wall_ns) + ')' : ''));
        numberAttrs(td, 'gpu_time', i, p[1], v);
        r.appendChild(td);
      });
      table.appendChild(r);
    });
    sec.appendChild(table);
  });

  part('per-step time', function () {
    var sec = byId('where');
    sec.appendChild(el('h3', null, 'Per step: GPU busy and idle'));
    if (!data.steps.length) {
      explain(sec, 'No steps: the trace has no PyTorch training steps, no NVTX range named like a step and no ' +
          'repeating GPU work (docs/steady-state.md).');
      return;
    }
    var grouped = data.steps.some(function (s) {
      return s.steps > 1;
    });
    explain(sec, 'One bar per step, as step_sum (' + (data.steps_source === 'pytorch' ? 'PyTorch\'s optimizer steps' :
        data.steps_source === 'iterations' ? 'the iterations found in the GPU work' :
        'the outermost NVTX ranges named like steps: step, step N, iteration, train_step, ProfilerStep#N') + '; ' + data.steps_total + ' steps): its wall time, split ' +
        'into the time its process\'s kernels kept the GPU busy and the rest (idle). A slow step is a tall bar; ' +
        'grey bars are warm-up, red ones outliers (step_sum\'s classification).' +
        (grouped ? ' With this many steps each bar is the slowest of a run of consecutive steps.' : ''));
    var multiPid = data.steps.some(function (s) {
      return s.pid !== data.steps[0].pid;
    });
    var stepLabel = function (s, n) {
      return clip((multiPid ? s.pid + ': ' : '') + s.label, n) + (s.steps > 1 ? ' (slowest of ' + s.steps + ')' : '');
    };
    var labels = data.steps.map(function (s) {
      return stepLabel(s, CHART_CHARS);
    });
    var stateColor = function (s) {
      return s.state === 'warm-up' ? COLORS.warmup : s.state === 'outlier' ? COLORS.outlier : COLORS.steady;
    };
    // A warm-up step many times longer than the others (start-up, autotuning) would flatten
    // them: the axis then stops at 1.25 x the longest other step, and the text says so.
    var others = 0;
    var tallest = 0;
    data.steps.forEach(function (s) {
      if (s.state !== 'warm-up') others = Math.max(others, s.wall_ns);
      tallest = Math.max(tallest, s.wall_ns);
    });
    var cut = others > 0 && tallest > 3 * others ? 1.25 * others / 1e6 : undefined;
    var opts = baseOptions();
    opts.scales = {
      x: { stacked: true, ticks: { autoSkip: true, maxRotation: 60 } },
      y: { stacked: true, title: { display: true, text: 'time (ms)' }, min: 0, max: cut }
    };
    // The busy bars' colour says the step's state: the legend names the states.
    opts.plugins.legend = {
      position: 'top',
      onClick: function () {},
      labels: {
        generateLabels: function () {
          return [['GPU busy (kernels), steady step', COLORS.steady], ['GPU busy, warm-up step', COLORS.warmup],
            ['GPU busy, outlier step', COLORS.outlier], ['GPU idle', COLORS.idle]].map(function (l) {
            return { text: l[0], fillStyle: l[1], strokeStyle: l[1], lineWidth: 0, hidden: false };
          });
        }
      }
    };
    opts.plugins.tooltip = {
      callbacks: {
        title: function (items) {
          return stepLabel(data.steps[items[0].dataIndex], TIP_CHARS);
        },
        label: function (ctx) {
          var s = data.steps[ctx.dataIndex];
          return ctx.datasetIndex === 0 ?
            'GPU busy: ' + duration(s.gpu_busy_ns) + ' of ' + duration(s.wall_ns) + ' (' + s.state + ')' :
            'GPU idle: ' + duration(s.idle_ns);
        }
      }
    };
    new Chart(chartBox(sec, 340), {
      type: 'bar',
      data: {
        labels: labels,
        datasets: [{
          label: 'GPU busy (kernels)',
          backgroundColor: data.steps.map(stateColor),
          data: data.steps.map(function (s) {
            return s.gpu_busy_ns / 1e6;
          })
        }, {
          label: 'GPU idle',
          backgroundColor: COLORS.idle,
          data: data.steps.map(function (s) {
            return s.idle_ns / 1e6;
          })
        }]
      },
      options: opts
    });
    if (cut !== undefined)
      explain(sec, 'The axis stops at ' + duration(cut * 1e6) + ', 1.25 x the longest step after warm-up: the ' +
          'warm-up bars that go past it are cut (hover them for their time).');
    var slowest = data.steps[0];
    data.steps.forEach(function (s) {
      if (s.wall_ns > slowest.wall_ns) slowest = s;
    });
    var p = el('p', 'explain');
    p.appendChild(document.createTextNode('Slowest step: '));
    var b = setText(el('b'), (multiPid ? slowest.pid + ': ' : '') + slowest.label, NAME_CHARS);
    p.appendChild(b);
    var v = el('span', null, ' ' + duration(slowest.wall_ns));
    numberAttrs(v, 'steps', data.steps.indexOf(slowest), 'Wall', slowest.wall_ns);
    p.appendChild(v);
    p.appendChild(document.createTextNode(' (GPU busy ' + duration(slowest.gpu_busy_ns) + ', ' + slowest.state + ').'));
    sec.appendChild(p);
  });

  part('timeline', function () {
    var view = byId('timeline-view');
    var sec = byId('timeline');
    if (!data.timeline) {
      sec.insertBefore(el('p', 'explain', 'The timeline overview was left out of this page (gpuscope report --no-timeline).'), view);
      return;
    }
    sec.insertBefore(el('p', 'explain', 'One lane per CPU thread (CUDA API calls, NVTX ranges) and per GPU stream (kernels, ' +
        'copies, memsets). Zoomed out, a lane\'s shade is how busy it was; zoomed in, the events themselves. Hover ' +
        'for name, duration, grid/block and the launching call.'), view);
    if (typeof window.gpuscopeTimeline !== 'function') throw new Error('the timeline component is missing');
    window.gpuscopeTimeline(view, data.timeline);
  });

  part('tables', function () {
    var sec = byId('tables');
    explain(sec, 'The reports `gpuscope stats -r NAME` prints, with the same numbers (sort: click a column; ' +
        'filter: type a part of a name). Only reports with rows are shown; docs/stats.md explains every column.');
    data.tables.forEach(function (r) {
      var div = el('div', 'report-section');
      div.id = 'table-' + r.name;
      div.appendChild(el('h3', null, r.title + ' (' + r.name + ')'));
      reportTable(div, r);
      sec.appendChild(div);
    });
  });

  function seriesChart(parent, series, yTitle, yFormat, stepped) {
    var opts = baseOptions();
    opts.parsing = false;
    opts.normalized = true;
    opts.scales = {
      x: { type: 'linear', title: { display: true, text: 'time since the start (ms)' } },
      y: { title: { display: true, text: yTitle }, ticks: { callback: function (v) { return yFormat(v); } } }
    };
    opts.plugins.tooltip = {
      callbacks: {
        label: function (ctx) {
          return ctx.dataset.label + ': ' + yFormat(ctx.parsed.y) + ' at ' + duration(ctx.parsed.x * 1e6);
        }
      }
    };
    new Chart(chartBox(parent, 300), {
      type: 'line',
      data: {
        datasets: series.map(function (s, i) {
          var pts = s.t_ns.map(function (t, k) {
            return { x: t / 1e6, y: s.values[k] };
          });
          return {
            label: clip(s.name, CHART_CHARS) +
                (s.points_total > s.t_ns.length ? ' (' + s.t_ns.length + ' of ' + s.points_total + ' points)' : ''),
            data: pts,
            borderColor: SERIES_COLORS[i % SERIES_COLORS.length],
            backgroundColor: SERIES_COLORS[i % SERIES_COLORS.length],
            borderWidth: 1.5,
            pointRadius: 0,
            stepped: stepped
          };
        })
      },
      options: opts
    });
  }

  part('memory and metrics', function () {
    var sec = byId('counters');
    if (data.memory.length) {
      sec.appendChild(el('h3', null, 'Device memory in use'));
      explain(sec, 'Memory in use on each GPU after every allocation and free (gpuscope trace --cuda-memory-usage), ' +
          'summed over its processes; a counter holds its value until the next change. Long runs keep each ' +
          'stretch\'s lowest and highest point.');
      seriesChart(sec, data.memory, 'memory in use', memorySize, true);
    }
    if (data.metrics.length) {
      var charts = [];
      data.metrics.forEach(function (s) {
        if (charts.indexOf(s.chart) < 0) charts.push(s.chart);
      });
      sec.appendChild(el('h3', null, 'GPU metrics'));
      explain(sec, 'The GPU\'s own counters sampled over time (gpuscope trace --gpu-metrics), one chart per unit.');
      charts.forEach(function (c) {
        var unit = c === 'value' ? '' : c;
        seriesChart(sec, data.metrics.filter(function (s) {
          return s.chart === c;
        }), unit || 'value', function (v) {
          return sig3(v) + (unit ? ' ' + unit : '');
        }, false);
      });
    }
    if (!data.memory.length && !data.metrics.length)
      explain(sec, 'This trace records neither memory in use nor GPU metrics (see below).');
  });

  part('left out', function () {
    var sec = byId('left-out');
    var ul = el('ul', 'notes');
    data.notes.forEach(function (n) {
      ul.appendChild(setText(el('li'), n, NOTE_CHARS));
    });
    if (data.timeline && data.timeline.included_events < data.timeline.total_events)
      ul.appendChild(el('li', null, 'the timeline holds ' + data.timeline.included_events + ' of ' +
          data.timeline.total_events + ' events (the longest, and the longest of each stretch of time); the SQLite ' +
          'trace and gpuscope export hold them all'));
    if (!ul.firstChild) ul.appendChild(el('li', null, 'nothing: every kind of data the trace holds is shown'));
    sec.appendChild(ul);
  });
  rendered();
})();
