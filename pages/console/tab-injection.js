/* Injection tab: the latest injection snapshot recorded for the selected scope. */
(function () {
  'use strict';
  var C = window.ltmConsole;
  var t = C.t, h = C.h, fill = C.fill, fmtTime = C.fmtTime;
  var call = C.call, spaceBody = C.spaceBody;
  var alertBox = C.alertBox, errorBox = C.errorBox, loadingBox = C.loadingBox, needSpace = C.needSpace,
    head = C.head, refreshBtn = C.refreshBtn, profileCard = C.profileCard;

  C.defineTab('injection', {
    load: function () { return call('/injection', spaceBody()); },
    render: function (panel, view) {
      if (needSpace(panel)) return;
      var d = view.data, snap = d && d.snapshot;
      var body = null;
      if (d && !snap) body = h('div', { class: 'empty' }, t('injection.empty'));
      if (snap) {
        var speaker = (snap.speaker && C.who(snap.speaker.name, snap.speaker.id)) || t('common.none');
        var stat = function (k, v) { return h('div', { class: 'stat' }, h('div', { class: 'k' }, t(k)), h('div', { class: 'v' }, v)); };
        body = h('div', { class: 'stack' },
          h('div', { class: 'stats' },
            stat('injection.time', fmtTime(snap.time)),
            stat('injection.query', snap.query_id == null ? t('common.none') : String(snap.query_id)),
            stat('injection.injected', snap.injected ? t('common.yes') : t('common.no')),
            stat('injection.blocks', String(snap.blocks || 0)),
            stat('injection.chars', String(snap.chars || 0)),
            stat('injection.speaker', speaker)),
          snap.query_id == null ? null : h('p', { class: 'help', id: 'injection-query-help' }, t('injection.queryHelp')),
          snap.errors && snap.errors.length ? alertBox('warn', h('div', null, h('strong', null, t('injection.errors')),
            h('ul', null, snap.errors.map(function (x) { return h('li', null, x); })))) : null,
          h('div', { class: 'grid2' },
            profileCard(t('profiles.session'), snap.session_profile),
            snap.speaker_profile ? profileCard(t('injection.speakerProfile'), snap.speaker_profile) : null),
          h('h3', null, t('injection.episodes')),
          snap.episodes && snap.episodes.length ? h('div', { class: 'list' }, snap.episodes.map(function (ep) {
            return h('article', { class: 'ep' }, h('p', { class: 'ep-content' }, ep.content),
              h('div', { class: 'ep-meta' }, h('span', { class: 'mono' }, ep.id)));
          })) : h('div', { class: 'empty' }, t('injection.noEpisodes')));
      }
      fill(panel, head(t('tab.injection'), refreshBtn('injection')),
        view.error ? errorBox(view.error) : null, view.loading && !d ? loadingBox() : null, body);
    }
  });
})();
