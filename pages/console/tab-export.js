/* Export tab: L1 profiles and L2 episodes of the selected space as one copyable JSON document. */
(function () {
  'use strict';
  var C = window.ltmConsole;
  var S = C.S, t = C.t, h = C.h, fill = C.fill;
  var call = C.call, spaceBody = C.spaceBody, ApiError = C.ApiError, renderPanel = C.renderPanel;
  var alertBox = C.alertBox, errorBox = C.errorBox, loadingBox = C.loadingBox, needSpace = C.needSpace,
    head = C.head, jsonBlock = C.jsonBlock;

  // Kept across spaces: the statuses to include.
  var statusesWanted = { active: true, superseded: true, archived: true };

  C.defineTab('export', {
    render: function (panel, view) {
      if (needSpace(panel)) return;
      var boxes = ['active', 'superseded', 'archived'].map(function (s) {
        var box = h('input', { type: 'checkbox', id: 'export-status-' + s, checked: statusesWanted[s],
          onchange: function () { statusesWanted[s] = box.checked; } });
        return h('label', { class: 'check' }, box, h('span', null, t('status.' + s)));
      });
      var generate = h('button', { type: 'button', class: 'btn primary', id: 'export-generate', disabled: view.loading, onclick: function () {
        var statuses = Object.keys(statusesWanted).filter(function (k) { return statusesWanted[k]; });
        if (!statuses.length) { view.error = new ApiError(t('export.pickStatus'), 'invalid_input'); renderPanel('export'); return; }
        view.loading = true; view.error = null; renderPanel('export');
        var space = S.space;
        call('/export', spaceBody({ statuses: statuses })).then(function (res) { if (space === S.space) { view.data = res; view.error = null; } },
          function (err) { if (space === S.space) view.error = err; })
          .then(function () { view.loading = false; renderPanel('export'); });
      } }, t('export.generate'));
      var d = view.data, summary = null;
      if (d) {
        var text = JSON.stringify(d.export, null, 2);
        summary = h('p', { class: 'muted small' }, t('export.summary', {
          episodes: d.export.l2 ? d.export.l2.episodes.length : 0,
          speakers: Object.keys(d.export.l1.speaker_profiles || {}).length, chars: text.length }));
      }
      fill(panel,
        head(t('tab.export')),
        h('p', { class: 'help' }, t('export.intro')),
        h('fieldset', { class: 'card', style: 'margin:0 0 12px' }, h('legend', { class: 'small' }, t('export.statuses')),
          h('div', { class: 'row', style: 'gap:16px' }, boxes)),
        h('div', { class: 'row' }, generate, view.loading ? loadingBox() : null),
        view.error ? h('div', { style: 'margin-top:12px' }, errorBox(view.error)) : null,
        d && d.l2_error ? h('div', { style: 'margin-top:12px' }, alertBox('warn', t('export.l2Missing', { error: d.l2_error }))) : null,
        d ? h('div', { class: 'stack', style: 'margin-top:12px' }, summary, jsonBlock('export-json', t('export.label'), d.export)) : null);
    }
  });
})();
