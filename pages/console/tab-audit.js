/* Audit tab: the paged audit log of the selected scope and its JSON export. */
(function () {
  'use strict';
  var C = window.ltmConsole;
  var t = C.t, h = C.h, fill = C.fill, fmtTime = C.fmtTime, said = C.said, term = C.term;
  var call = C.call, spaceBody = C.spaceBody, loadTab = C.loadTab, renderPanel = C.renderPanel;
  var errorBox = C.errorBox, loadingBox = C.loadingBox, needSpace = C.needSpace, head = C.head,
    refreshBtn = C.refreshBtn, pager = C.pager, jsonBlock = C.jsonBlock;

  var state = { page: 1 };

  C.defineTab('audit', {
    load: function () { return call('/audit', spaceBody({ page: state.page, page_size: 20 })); },
    reset: function () { state = { page: 1 }; },
    render: function (panel, view) {
      if (needSpace(panel)) return;
      var d = view.data;
      var exportBtn = h('button', { type: 'button', class: 'btn small', id: 'audit-export', onclick: function () {
        view.exportError = null;
        call('/audit/export', spaceBody()).then(function (res) { view.exported = res.export; renderPanel('audit'); },
          function (err) { view.exportError = err; renderPanel('audit'); });
      } }, t('audit.export'));
      var table = null;
      if (d && d.entries.length) {
        var cols = ['time', 'operation', 'target', 'summary', 'sender'];
        table = h('table', { class: 'audit', id: 'audit-table' },
          h('thead', null, h('tr', null, cols.map(function (c) { return h('th', { scope: 'col', class: 'col-' + c }, t('audit.' + c)); }))),
          h('tbody', null, d.entries.map(function (e) {
            var target = term('target.', e.target_type) + (e.target_id ? ' ' + e.target_id : '');
            var sender = C.who(e.sender_name, e.sender_id) || (e.query_id == null ? t('audit.console') : t('common.none'));
            return h('tr', null,
              h('td', { 'data-label': t('audit.time'), class: 'small' }, fmtTime(e.time)),
              h('td', { 'data-label': t('audit.operation'), class: 'op' },
                h('span', { class: 'badge', title: e.operation, 'data-operation': e.operation }, term('op.', e.operation))),
              h('td', { 'data-label': t('audit.target'), class: 'mono target' }, target),
              h('td', { 'data-label': t('audit.summary'), class: 'summary' },
                said({ code: e.summary_code, params: e.summary_params }, e.summary || '')),
              h('td', { 'data-label': t('audit.sender'), class: 'sender' }, sender));
          })));
      }
      fill(panel,
        head(t('tab.audit'), [d ? h('span', { class: 'muted small' }, t('common.total', { total: d.total })) : null, exportBtn, refreshBtn('audit')]),
        view.error ? errorBox(view.error) : null,
        view.loading && !d ? loadingBox() : null,
        d ? (table || h('div', { class: 'empty' }, t('audit.empty'))) : null,
        d && d.pages > 1 ? pager(d.page, d.pages, function (p) { state.page = p; loadTab('audit'); }) : null,
        view.exportError ? errorBox(view.exportError) : null,
        view.exported ? h('div', { style: 'margin-top:16px' }, jsonBlock('audit-json', t('audit.exportTitle'), view.exported)) : null);
    }
  });
})();
