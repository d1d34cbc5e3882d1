/* Profiles tab: the session profile and the speaker profiles of the selected scope_key. */
(function () {
  'use strict';
  var C = window.ltmConsole;
  var t = C.t, h = C.h, fill = C.fill;
  var call = C.call, spaceBody = C.spaceBody;
  var errorBox = C.errorBox, loadingBox = C.loadingBox, needSpace = C.needSpace, head = C.head,
    refreshBtn = C.refreshBtn, profileCard = C.profileCard;

  C.defineTab('profiles', {
    load: function () { return call('/profiles', spaceBody()); },
    render: function (panel, view) {
      if (needSpace(panel)) return;
      var d = view.data;
      var speakers = d ? Object.keys(d.speaker_profiles || {}) : [];
      fill(panel,
        head(t('tab.profiles'), refreshBtn('profiles')),
        view.error ? errorBox(view.error) : null,
        view.loading && !d ? loadingBox() : null,
        d ? h('div', { class: 'stack' },
          profileCard(t('profiles.session'), d.session_profile, 'session-profile'),
          h('h3', null, t('profiles.speakers')),
          speakers.length ? h('div', { class: 'grid2' }, speakers.map(function (sid) {
            return profileCard(t('profiles.speaker', { id: sid }), d.speaker_profiles[sid]);
          })) : h('div', { class: 'empty' }, t('profiles.noSpeakers'))) : null);
    }
  });
})();
