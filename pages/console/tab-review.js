/* Review tab: consolidation drafts and the candidate queue (for now: whether they are switched on). */
(function () {
  'use strict';
  var C = window.ltmConsole;
  var S = C.S, t = C.t, h = C.h, fill = C.fill;
  var call = C.call, spaceBody = C.spaceBody;
  var alertBox = C.alertBox, errorBox = C.errorBox, loadingBox = C.loadingBox, head = C.head, refreshBtn = C.refreshBtn;

  C.defineTab('review', {
    needsSpace: false,
    load: function () { return call('/review', S.space ? spaceBody() : {}); },
    render: function (panel, view) {
      var d = view.data;
      var flag = function (key, on) {
        return h('div', { class: 'stat' }, h('div', { class: 'k' }, t(key)), h('div', { class: 'v' }, t(on ? 'review.enabled' : 'review.disabled')));
      };
      fill(panel,
        head(t('review.title'), refreshBtn('review')),
        view.error ? errorBox(view.error) : null,
        view.loading && !d ? loadingBox() : null,
        d ? h('div', { class: 'stack' },
          alertBox('info', d.enabled ? d.message : t('review.off')),
          h('div', { class: 'stats wide' }, flag('review.consolidation', d.settings.consolidation_enabled),
            flag('review.candidates', d.settings.candidate_extraction_enabled))) : null);
    }
  });
})();
