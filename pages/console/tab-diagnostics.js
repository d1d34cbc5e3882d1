/* Diagnostics tab: the health check and the write fences (clear the selected space's fence). */
(function () {
  'use strict';
  var C = window.ltmConsole;
  var S = C.S, t = C.t, h = C.h, fill = C.fill, fmtTime = C.fmtTime, said = C.said, term = C.term;
  var call = C.call, spaceBody = C.spaceBody, renderPanel = C.renderPanel;
  var alertBox = C.alertBox, errorBox = C.errorBox, confirmDialog = C.confirmDialog, head = C.head;

  var clearInstallation = false;   // "also clear the installation-wide fence" checkbox

  function fenceRow(f, withSelect) {
    var label = f.kind === 'l2' ? 'L2 · ' + f.user_key : f.kind === 'l1' ? 'L1 · ' + f.scope_key : f.space;
    var select = null;
    if (withSelect && (f.kind === 'l1' || (f.kind === 'l2' && f.current_kb))) {
      var sp = f.kind === 'l1' ? (S.overview.scopes.filter(function (x) { return x.scope_key === f.scope_key; })[0] || { scope_key: f.scope_key, user_key: f.scope_key })
        : (S.overview.scopes.filter(function (x) { return x.user_key === f.user_key; })[0] || { scope_key: f.user_key, user_key: f.user_key });
      select = h('button', { type: 'button', class: 'btn small link', onclick: function () { C.selectSpace(sp, false); } }, t('fence.select'));
    }
    return h('div', { class: 'fence' },
      h('div', { class: 'row', style: 'justify-content:space-between' }, h('span', { class: 'mono' }, label), select),
      h('div', { class: 'muted small' }, t('fence.since', { time: fmtTime(f.since) }) + ' · ' + t('fence.operation', { operation: term('op.', f.operation) })),
      f.reason ? h('div', { class: 'small' }, f.reason) : null);
  }
  function fencesOfSpace(fences) {
    if (!S.space) return [];
    return fences.filter(function (f) {
      return (f.kind === 'l1' && f.scope_key === S.space.scope_key) || (f.kind === 'l2' && f.current_kb && f.user_key === S.space.user_key);
    });
  }
  function render(panel, view) {
    var report = view.data && view.data.report;
    var run = h('button', { type: 'button', class: 'btn primary', id: 'health-run', disabled: view.loading, onclick: function () {
      view.loading = true; view.error = null; renderPanel('diagnostics');
      call('/health', S.space ? spaceBody() : {}).then(function (res) { view.data = res; },
        function (err) { view.error = err; })
        .then(function () { view.loading = false; renderPanel('diagnostics'); });
    } }, view.loading ? t('diag.running') : t('diag.run'));
    var cards = null;
    if (report) {
      cards = h('div', { class: 'stack' },
        h('div', { class: 'row' }, h('span', { class: 'badge ' + report.level, id: 'health-overall' },
          t('diag.overall', { level: t('level.' + report.level) })),
          h('span', { class: 'muted small' }, t('diag.checkedAt', { time: fmtTime(view.data.checked_at) }))),
        h('div', { class: 'health', id: 'health-cards' }, report.items.map(function (item) {
          return h('article', { class: 'hcard ' + item.level, 'data-key': item.key, 'data-level': item.level },
            h('div', { class: 'head' }, h('h3', null, term('item.', item.key)),
              h('span', { class: 'badge ' + item.level }, t('level.' + item.level))),
            h('p', { 'data-code': item.code || '' }, said(item, item.message)));
        })));
    }
    var fences = (S.overview && S.overview.fences) || [];
    var mine = fencesOfSpace(fences);
    var others = fences.filter(function (f) { return mine.indexOf(f) === -1; });
    var instBox = h('input', { type: 'checkbox', id: 'fence-installation', checked: clearInstallation,
      onchange: function () { clearInstallation = instBox.checked; } });
    var clear = h('button', { type: 'button', class: 'btn danger', id: 'fence-clear', disabled: !S.space || view.clearing,
      onclick: function () { clearFence(view); } }, t('fence.clear'));
    var fenceSection = h('section', { class: 'card stack', 'aria-labelledby': 'fence-title' },
      h('h2', { id: 'fence-title' }, t('fence.title')),
      h('p', { class: 'help' }, t('fence.intro')),
      S.space ? (mine.length ? h('div', { id: 'fence-here' }, h('h3', { style: 'margin-bottom:6px' }, t('fence.here')), mine.map(function (f) { return fenceRow(f, false); }))
        : h('p', { class: 'muted', id: 'fence-here' }, t('fence.none'))) : h('p', { class: 'muted' }, t('common.selectSpace')),
      h('label', { class: 'check' }, instBox, h('span', null, t('fence.installation'))),
      h('div', { class: 'row' }, clear),
      view.fenceResult ? (view.fenceResult.error ? errorBox(view.fenceResult.error) : alertBox('ok', view.fenceResult.message)) : null,
      others.length ? h('div', null, h('h3', { style: 'margin-bottom:6px' }, t('fence.others')), others.map(function (f) { return fenceRow(f, true); })) : null);
    fill(panel,
      head(t('tab.diagnostics')),
      h('p', { class: 'help' }, t('diag.intro')),
      h('div', { class: 'row', style: 'margin-bottom:12px' }, run),
      view.error ? errorBox(view.error) : null,
      cards,
      h('div', { style: 'margin-top:16px' }, fenceSection));
  }
  function clearFence(view) {
    var installation = clearInstallation;
    confirmDialog({ title: t('fence.confirmTitle'), body: t('fence.confirm'),
      extra: installation ? t('fence.confirmInstallation') : '', confirm: t('fence.clear'), danger: true }).then(function (yes) {
      if (!yes) return;
      var body = spaceBody();
      if (installation) body.installation = true;
      view.clearing = true; renderPanel('diagnostics');
      call('/fence/clear', body).then(function (res) {
        view.fenceResult = { message: res.cleared.length ? t('fence.cleared', { list: res.cleared.join(', ') }) : t('fence.nothing') };
        clearInstallation = false;
        S.views.audit = {};
        S.views.episodes.notice = null;   // a "writes paused" notice is stale now (the fences: api.js reads the overview)
      }, function (err) { view.fenceResult = { error: err }; return C.loadOverview(); })
        .then(function () { view.clearing = false; renderPanel('diagnostics'); });
    });
  }

  // No loader: the health check runs on demand (it writes two probe records).
  C.defineTab('diagnostics', { render: render });
})();
