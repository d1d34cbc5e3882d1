/* Profiles tab: the session profile and the speaker profiles of the selected scope_key, each
   editable in place (the same checks as the update_profile tool; every change is audited) and
   clearable; a speaker profile can be added by sender id. */
(function () {
  'use strict';
  var C = window.ltmConsole;
  var S = C.S, t = C.t, h = C.h, fill = C.fill;
  var call = C.call, spaceBody = C.spaceBody, loadTab = C.loadTab, renderPanel = C.renderPanel;
  var errorBox = C.errorBox, alertBox = C.alertBox, loadingBox = C.loadingBox, needSpace = C.needSpace, head = C.head,
    refreshBtn = C.refreshBtn, profileCard = C.profileCard, toast = C.toast, confirmDialog = C.confirmDialog;

  // Which profile is being edited: {target, sender_id} or null; survives a reload of the tab.
  var state = { editing: null, notice: null };

  function ref(target, senderId) { return { target: target, sender_id: senderId || '' }; }
  function same(a, b) { return a && b && a.target === b.target && a.sender_id === b.sender_id; }
  function lines(text) { return text.split('\n').map(function (x) { return x.trim(); }).filter(Boolean); }
  function refBody(r, extra) {
    var body = { target: r.target };
    if (r.target === 'speaker') body.sender_id = r.sender_id;
    Object.keys(extra || {}).forEach(function (k) { body[k] = extra[k]; });
    return spaceBody(body);
  }
  function done(message) {
    state.editing = null; state.notice = { kind: 'ok', message: message }; toast(message);
    S.views.audit = {}; S.views.export = {};
    return loadTab('profiles');
  }
  function failed(err) { state.notice = { kind: 'error', error: err }; renderPanel('profiles'); }

  function editForm(r, p) {
    p = p || {};
    var id = r.target === 'session' ? 'session' : 'speaker-' + r.sender_id;
    var name = h('input', { type: 'text', id: 'pe-name-' + id, maxlength: '100' });
    name.value = p.name || '';
    var traits = h('textarea', { id: 'pe-traits-' + id, rows: 3 });
    traits.value = (p.traits || []).join('\n');
    var prefs = h('textarea', { id: 'pe-preferences-' + id, rows: 3 });
    prefs.value = (p.preferences || []).join('\n');
    var notes = h('textarea', { id: 'pe-notes-' + id, rows: 3 });
    notes.value = p.notes || '';
    return h('form', { class: 'card stack profile-edit', 'data-profile': id, novalidate: true, onsubmit: function (e) {
      e.preventDefault();
      var fields = { name: name.value, traits: lines(traits.value), preferences: lines(prefs.value), notes: notes.value };
      call('/profile/edit', refBody(r, { fields: fields })).then(function () { return done(t('profiles.saved')); }, failed);
    } },
      h('h3', null, r.target === 'session' ? t('profiles.session') : t('profiles.speaker', { id: r.sender_id })),
      h('label', { class: 'field' }, h('span', null, t('profiles.name')), name),
      h('label', { class: 'field' }, h('span', null, t('profiles.traitsOnePerLine')), traits),
      h('label', { class: 'field' }, h('span', null, t('profiles.preferencesOnePerLine')), prefs),
      h('label', { class: 'field' }, h('span', null, t('profiles.notes')), notes),
      h('div', { class: 'row end' },
        h('button', { type: 'button', class: 'btn', onclick: function () { state.editing = null; renderPanel('profiles'); } },
          t('common.cancel')),
        h('button', { type: 'submit', class: 'btn primary', 'data-action': 'save' }, t('profiles.save'))));
  }
  function clearProfile(r, title) {
    confirmDialog({ title: t('profiles.clearTitle'), body: t('profiles.clearBody', { profile: title }),
      confirm: t('profiles.clear'), danger: true }).then(function (yes) {
      if (!yes) return;
      call('/profile/clear', refBody(r)).then(function (res) {
        return done(res.cleared ? t('profiles.cleared') : t('profiles.alreadyEmpty'));
      }, failed);
    });
  }
  function card(r, title, profile, id) {
    if (same(state.editing, r)) return editForm(r, profile);
    var c = profileCard(title, profile, id);
    c.setAttribute('data-profile', r.target === 'session' ? 'session' : 'speaker-' + r.sender_id);
    c.appendChild(h('div', { class: 'row end', style: 'margin-top:8px' },
      h('button', { type: 'button', class: 'btn small', 'data-action': 'edit',
        onclick: function () { state.editing = r; state.notice = null; renderPanel('profiles'); } }, t('profiles.edit')),
      h('button', { type: 'button', class: 'btn small danger', 'data-action': 'clear',
        onclick: function () { clearProfile(r, title); } }, t('profiles.clear'))));
    return c;
  }
  function newSpeakerForm(d) {
    var input = h('input', { type: 'text', id: 'pe-new-sender', class: 'grow mono', autocomplete: 'off', spellcheck: 'false',
      'aria-label': t('profiles.newSenderId'), placeholder: t('profiles.newSenderId') });
    return h('form', { class: 'row', id: 'profile-new', novalidate: true, onsubmit: function (e) {
      e.preventDefault();
      var sid = input.value.trim();
      if (!sid) { input.focus(); return; }
      state.editing = ref('speaker', sid); state.notice = null;
      if (!(sid in d.speaker_profiles)) d.speaker_profiles[sid] = {};
      renderPanel('profiles');
    } }, input, h('button', { type: 'submit', class: 'btn' }, t('profiles.addSpeaker')));
  }

  C.defineTab('profiles', {
    load: function () { return call('/profiles', spaceBody()); },
    render: function (panel, view) {
      if (needSpace(panel)) return;
      var d = view.data, notice = state.notice;
      var speakers = d ? Object.keys(d.speaker_profiles || {}) : [];
      fill(panel,
        head(t('tab.profiles'), refreshBtn('profiles')),
        notice ? (notice.error ? errorBox(notice.error) : alertBox(notice.kind, notice.message)) : null,
        view.error ? errorBox(view.error) : null,
        view.loading && !d ? loadingBox() : null,
        d ? h('div', { class: 'stack' },
          card(ref('session'), t('profiles.session'), d.session_profile, 'session-profile'),
          h('h3', null, t('profiles.speakers')),
          speakers.length ? h('div', { class: 'grid2' }, speakers.map(function (sid) {
            return card(ref('speaker', sid), t('profiles.speaker', { id: sid }), d.speaker_profiles[sid]);
          })) : h('div', { class: 'empty' }, t('profiles.noSpeakers')),
          newSpeakerForm(d)) : null);
    },
    reset: function () { state = { editing: null, notice: null }; }
  });
})();
