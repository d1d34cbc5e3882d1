/* People tab: one person (a sender id) across every chat of the installation: what is kept about
   them, space by space, an export of all of it, and its erasure (a dry run is counted first, a
   fenced space is reported and not written). Not tied to the selected space. */
(function () {
  'use strict';
  var C = window.ltmConsole;
  var S = C.S, t = C.t, h = C.h, fill = C.fill;
  var call = C.call, renderPanel = C.renderPanel;
  var alertBox = C.alertBox, errorBox = C.errorBox, loadingBox = C.loadingBox, toast = C.toast,
    confirmDialog = C.confirmDialog, head = C.head, jsonBlock = C.jsonBlock;

  var KINDS = ['episodes', 'summaries', 'speaker_profiles', 'candidates', 'snapshots'];
  var state = { sender: '', found: null, exported: null, erased: null, busy: false, error: null };

  // What an operator counts: chats (a speaker profile, candidates, a snapshot live in the chat's L1 space)
  // and episode spaces (L2: the chat's own, or the bot's shared one), not "spaces" of both kinds together.
  function placeCounts(spaces) {
    var chats = 0, episodeSpaces = 0;
    spaces.forEach(function (s) { if (s.kind === 'l2') episodeSpaces += 1; else chats += 1; });
    return { chats: chats, episodeSpaces: episodeSpaces };
  }
  function countsText(counts) {
    return KINDS.filter(function (k) { return counts[k]; }).map(function (k) {
      return t('people.count.' + k, { n: counts[k] });
    }).join(' · ') || t('people.nothing');
  }
  function spaceRow(space, outcome) {
    return h('tr', { 'data-space': space.kind + ':' + space.key, 'data-outcome': outcome || null },
      h('td', null, space.kind.toUpperCase()),
      h('td', { class: 'mono' }, space.key),
      h('td', null, countsText(space.counts)),
      h('td', null, outcome ? h('span', { class: 'badge ' + (outcome === 'erased' ? 'green' : outcome === 'planned' ? '' : 'amber') },
        t('people.outcome.' + outcome)) : space.fenced ? h('span', { class: 'badge amber' }, t('people.fenced')) : null,
        space.error ? h('div', { class: 'small' }, space.error) : null));
  }
  function table(spaces, outcomes) {
    return h('div', { class: 'table-wrap' }, h('table', { class: 'settings', id: outcomes ? 'people-result' : 'people-spaces' },
      h('thead', null, h('tr', null, ['people.kind', 'people.space', 'people.kept', 'people.state'].map(function (k) {
        return h('th', { scope: 'col' }, t(k));
      }))),
      h('tbody', null, spaces.map(function (s) { return spaceRow(s, outcomes ? s.outcome : null); }))));
  }
  function run(promise, then) {
    state.busy = true; state.error = null; renderPanel('people');
    promise.then(then, function (err) { state.error = err; })
      .then(function () { state.busy = false; renderPanel('people'); });
  }
  function find(sender) {
    state.sender = sender; state.found = null; state.exported = null; state.erased = null;
    run(call('/person/find', { sender_id: sender }), function (res) { state.found = res; });
  }
  function exportAll() {
    run(call('/person/export', { sender_id: state.sender }), function (res) { state.exported = res.export; });
  }
  function erase() {
    var sender = state.sender;
    state.busy = true; state.error = null; renderPanel('people');
    call('/person/erase', { sender_id: sender, dry_run: true }).then(function (plan) {   // counted first
      state.busy = false; renderPanel('people');
      if (!plan.spaces.length) { toast(t('people.nothing')); return; }
      var fenced = plan.fenced.length ? t('people.confirmFenced', { list: plan.fenced.join(', ') }) : '';
      return confirmDialog({ title: t('people.confirmTitle', { id: sender }),
        body: t('people.confirm', Object.assign({ counts: countsText(plan.counts) }, placeCounts(plan.spaces))),
        extra: fenced, confirm: t('people.erase'), danger: true }).then(function (yes) {
        if (!yes) return;
        run(call('/person/erase', { sender_id: sender, dry_run: false }), function (res) {
          state.erased = res; state.found = null; state.exported = null;
          ['profiles', 'episodes', 'injection', 'audit', 'export', 'review'].forEach(function (tab) { S.views[tab] = {}; });
          toast(t('people.done', { counts: countsText(res.counts) }));
        });
      });
    }, function (err) { state.busy = false; state.error = err; renderPanel('people'); });
  }
  function render(panel) {
    var input = h('input', { type: 'text', id: 'people-sender', class: 'grow mono', autocomplete: 'off', spellcheck: 'false',
      'aria-label': t('people.senderId'), placeholder: t('people.senderId') });
    input.value = state.sender;
    var form = h('form', { class: 'row', id: 'people-form', novalidate: true, onsubmit: function (e) {
      e.preventDefault();
      var sender = input.value.trim();
      if (sender) find(sender); else input.focus();
    } }, input, h('button', { type: 'submit', class: 'btn primary', disabled: state.busy }, t('people.find')));
    var f = state.found, r = state.erased;
    fill(panel,
      head(t('tab.people')),
      h('p', { class: 'help' }, t('people.intro')),
      form,
      state.error ? errorBox(state.error) : null,
      state.busy ? loadingBox() : null,
      f ? h('div', { class: 'stack', id: 'people-found' },
        h('p', { id: 'people-summary' }, f.spaces.length ? t('people.summary', Object.assign({ id: f.sender_id, counts: countsText(f.counts),
          l1: f.searched.l1, l2: f.searched.l2 }, placeCounts(f.spaces))) : t('people.none', { id: f.sender_id, l1: f.searched.l1, l2: f.searched.l2 })),
        f.spaces.length ? table(f.spaces, false) : null,
        f.spaces.length ? h('div', { class: 'row' },
          h('button', { type: 'button', class: 'btn', id: 'people-export', disabled: state.busy, onclick: exportAll }, t('people.export')),
          h('button', { type: 'button', class: 'btn danger', id: 'people-erase', disabled: state.busy, onclick: erase }, t('people.erase'))) : null) : null,
      state.exported ? jsonBlock('people-json', t('people.exportTitle', { id: state.sender }), state.exported) : null,
      r ? h('div', { class: 'stack', id: 'people-erased' },
        alertBox(r.fenced.length || r.failed.length ? 'warn' : 'ok', t('people.done', { counts: countsText(r.counts) }) +
          (r.fenced.length ? ' ' + t('people.leftFenced', { list: r.fenced.join(', ') }) : '') +
          (r.failed.length ? ' ' + t('people.leftFailed', { list: r.failed.join(', ') }) : '')),
        table(r.spaces, true)) : null);
  }

  C.defineTab('people', { render: render, needsSpace: false });
})();
