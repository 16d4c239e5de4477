// Draws the charts of an agentjail report from the JSON in #report-data. Every string from the log reaches the page
// through textContent or setAttribute, never as markup.
(function () {
  'use strict';
  var SVG = 'http://www.w3.org/2000/svg';
  var PALETTE = ['#3b6fd4', '#e07b24', '#2e9e6a', '#c23b6e', '#7a5cc7', '#b5a31f', '#1f9fb5', '#8a5a3c', '#8c8c8c'];
  var DECISION_COLOURS = { allow: '#2e9e6a', deny: '#c62828', error: '#e0a024' };
  var data = JSON.parse(document.getElementById('report-data').textContent);

  function svg(tag, attrs) {
    var e = document.createElementNS(SVG, tag);
    Object.keys(attrs || {}).forEach(function (k) { e.setAttribute(k, String(attrs[k])); });
    return e;
  }

  function text(x, y, content, attrs) {
    var t = svg('text', Object.assign({ x: x, y: y }, attrs || {}));
    t.textContent = content;
    return t;
  }

  function titled(e, title) {
    var t = svg('title');
    t.textContent = title;
    e.appendChild(t);
    return e;
  }

  function empty(container, chart, message) {
    var p = document.createElement('p');
    p.className = 'empty';
    p.setAttribute('data-chart', chart);
    p.setAttribute('data-empty', 'true');
    p.textContent = message;
    container.appendChild(p);
  }

  function bytes(n) {
    if (n < 1024) { return n + ' B'; }
    var units = ['KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB'];
    var v = n;
    var u = -1;
    while (v >= 1024 && u < units.length - 1) { v /= 1024; u++; }
    return v.toFixed(1) + ' ' + units[u];
  }

  function shorten(s, max) {
    return s.length > max ? s.slice(0, max - 1) + '\u2026' : s;
  }

  // One horizontal bar per item, or several stacked parts per item: parts = [{name, field, colour}].
  function barChart(id, chart, items, parts, format, emptyMessage) {
    var container = document.getElementById(id);
    if (items.length === 0) { empty(container, chart, emptyMessage); return; }
    var labelW = 260, barW = 520, valueW = 160, rowH = 24, width = labelW + barW + valueW;
    var max = 0;
    items.forEach(function (it) {
      var sum = 0;
      parts.forEach(function (p) { sum += it[p.field]; });
      max = Math.max(max, sum);
    });
    var root = svg('svg', { 'class': 'chart', viewBox: '0 0 ' + width + ' ' + (items.length * rowH + 4), role: 'img' });
    items.forEach(function (it, i) {
      var y = i * rowH + 2;
      root.appendChild(titled(text(labelW - 8, y + 15, shorten(it.key, 40), { 'text-anchor': 'end' }), it.key));
      var x = labelW, sum = 0;
      parts.forEach(function (p) {
        var v = it[p.field];
        sum += v;
        var w = max > 0 ? (v / max) * barW : 0;
        var bar = svg('rect', {
          'class': 'bar', x: x, y: y + 3, width: w, height: rowH - 6, fill: p.colour(it),
          'data-chart': chart, 'data-key': it.key, 'data-value': v
        });
        if (p.name) { bar.setAttribute('data-part', p.name); }
        root.appendChild(titled(bar, it.key + (p.name ? ' (' + p.name + ')' : '') + ': ' + format(v)));
        x += w;
      });
      root.appendChild(text(x + 6, y + 15, format(sum), { 'class': 'value' }));
    });
    container.appendChild(root);
  }

  function count(n) { return String(n); }
  function single(colour) { return [{ name: null, field: 'value', colour: colour }]; }

  function timeChart() {
    var s = data.series;
    var container = document.getElementById('chart-time');
    if (s.buckets.length === 0) { empty(container, 'time', 'No requests in this log.'); return; }
    var left = 40, top = 8, plotH = 220, bottom = 36, width = 900;
    var slot = (width - left - 8) / s.buckets.length;
    var barW = Math.max(1, Math.min(slot * 0.8, 48));
    var max = 0;
    s.counts.forEach(function (row) {
      var sum = row.reduce(function (a, b) { return a + b; }, 0);
      max = Math.max(max, sum);
    });
    var root = svg('svg', { 'class': 'chart', viewBox: '0 0 ' + width + ' ' + (top + plotH + bottom), role: 'img' });
    root.appendChild(svg('line', { 'class': 'axis', x1: left, y1: top + plotH, x2: width - 8, y2: top + plotH }));
    root.appendChild(text(left - 6, top + 10, count(max), { 'class': 'axis', 'text-anchor': 'end' }));
    root.appendChild(text(left - 6, top + plotH, '0', { 'class': 'axis', 'text-anchor': 'end' }));
    s.counts.forEach(function (row, b) {
      var x = left + b * slot + (slot - barW) / 2;
      var y = top + plotH;
      row.forEach(function (v, h) {
        if (v === 0) { return; }
        var hgt = max > 0 ? (v / max) * plotH : 0;
        y -= hgt;
        var bar = svg('rect', {
          'class': 'bar', x: x, y: y, width: barW, height: hgt, fill: PALETTE[h % PALETTE.length],
          'data-chart': 'time', 'data-bucket': s.buckets[b], 'data-host': s.hosts[h], 'data-value': v
        });
        root.appendChild(titled(bar, s.hosts[h] + ' at ' + s.buckets[b] + ': ' + v + (v === 1 ? ' request' : ' requests')));
      });
    });
    root.appendChild(text(left, top + plotH + 16, s.buckets[0], { 'class': 'axis' }));
    if (s.buckets.length > 1) {
      root.appendChild(text(width - 8, top + plotH + 16, s.buckets[s.buckets.length - 1], { 'class': 'axis', 'text-anchor': 'end' }));
    }
    root.appendChild(text(left, top + plotH + 32, 'one bar per ' + s.bucketSeconds + ' s', { 'class': 'axis' }));
    container.appendChild(root);
    var legend = document.getElementById('legend-time');
    s.hosts.forEach(function (host, h) {
      var li = document.createElement('li');
      li.setAttribute('data-host', host);
      var sw = svg('svg', { viewBox: '0 0 12 12' });
      sw.appendChild(svg('rect', { width: 12, height: 12, fill: PALETTE[h % PALETTE.length] }));
      li.appendChild(sw);
      var label = document.createElement('span');
      label.textContent = host;
      li.appendChild(label);
      legend.appendChild(li);
    });
  }

  timeChart();
  barChart('chart-decisions', 'decisions', data.decisions,
    single(function (it) { return DECISION_COLOURS[it.key] || '#8c8c8c'; }), count, 'No requests in this log.');
  barChart('chart-bytes', 'bytes', data.bytes, [
    { name: 'sent', field: 'sent', colour: function () { return '#3b6fd4'; } },
    { name: 'received', field: 'received', colour: function () { return '#9bb7ea'; } }
  ], bytes, 'No bytes in this log.');
  barChart('chart-redactions', 'redactions', data.redactions,
    single(function () { return '#c23b6e'; }), count, 'No secrets were redacted.');
  barChart('chart-mcp', 'mcp', data.mcp,
    single(function () { return '#7a5cc7'; }), count, 'No MCP tool calls in this log.');
  document.body.setAttribute('data-rendered', 'true');
})();
