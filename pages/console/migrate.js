/* Settings tab, "Migrate from the official plugin": choose a migration bundle (scripts/export_official.py),
   dry run it, then import it into every chat at once. Import is offered only after a dry run of the same
   file (with the same choice about forgotten records), so what it writes has been shown first. Records the
   official plugin was asked to forget or delete are skipped unless the operator ticks the box. */
(function () {
  'use strict';
  var C = window.ltmConsole;
  var t = C.t, h = C.h, call = C.call, renderPanel = C.renderPanel;
  var alertBox = C.alertBox, errorBox = C.errorBox, toast = C.toast, confirmDialog = C.confirmDialog;
  var state = { text: null, name: '', report: null, dryOf: null, busy: false, error: null, forgotten: false };
  var PARTS = ['profiles', 'episodes', 'audit', 'candidates'];

  function choose(input) {
    var file = input.files && input.files[0];
    state.report = null; state.dryOf = null; state.error = null;
    if (!file) { state.text = null; state.name = ''; renderPanel('settings'); return; }
    var reader = new FileReader();
    reader.onload = function () { state.text = String(reader.result); state.name = file.name; renderPanel('settings'); };
    reader.onerror = function () { state.error = { message: t('migrate.unreadable') }; renderPanel('settings'); };
    reader.readAsText(file);
  }
  function run(dryRun) {
    state.busy = true; state.error = null; renderPanel('settings');
    var text = state.text;
    var forgotten = state.forgotten;
    call('/migrate', { bundle: text, dry_run: dryRun, include_forgotten: forgotten }).then(function (res) {
      state.report = res;
      state.dryOf = dryRun ? { text: text, forgotten: forgotten } : null;
      if (!dryRun) { toast(t('migrate.done')); C.loadTab('settings'); }  // overrides changed (the overview: api.js)
    }, function (err) { state.error = err; })
      .then(function () { state.busy = false; renderPanel('settings'); });
  }
  function importNow() {
    confirmDialog({ title: t('migrate.confirmTitle'), body: t('migrate.confirm', { name: state.name }),
      extra: t('migrate.confirmExtra'), confirm: t('migrate.import') }).then(function (yes) { if (yes) run(false); });
  }
  function cell(part) {
    var skipped = part.skipped || [];
    return h('td', { class: 'mono' }, t('migrate.counts', { write: part.write, already: part.already, skipped: skipped.length }),
      skipped.length ? h('details', null, h('summary', null, t('migrate.why')),
        h('ul', { class: 'small' }, skipped.map(function (s) { return h('li', null, '[' + s.at + '] ' + s.reason); }))) : null);
  }
  function report(r) {
    return h('div', { class: 'stack', id: 'migrate-report', 'data-dry-run': String(r.dry_run) },
      alertBox(r.dry_run ? 'info' : 'ok', r.dry_run ? t('migrate.dryTitle') : t('migrate.doneTitle')),
      h('div', { class: 'table-wrap' }, h('table', { class: 'settings', id: 'migrate-chats' },
        h('thead', null, h('tr', null, h('th', { scope: 'col' }, t('migrate.chat')),
          PARTS.map(function (p) { return h('th', { scope: 'col' }, t('migrate.part.' + p)); }))),
        h('tbody', null, r.chats.map(function (c) {
          return h('tr', { 'data-key': c.key }, h('th', { scope: 'row', title: c.key }, c.label || c.key,
            c.problem ? h('div', { class: 'muted small migrate-problem' }, c.problem) : null),
          c.problem ? h('td', { colspan: PARTS.length, class: 'muted' }, t('migrate.notImported'))
            : PARTS.map(function (p) { return cell(c[p]); }));
        })))),
      h('div', { class: 'table-wrap' }, h('table', { class: 'settings', id: 'migrate-settings' },
        h('thead', null, h('tr', null, ['migrate.setting', 'migrate.value', 'migrate.action'].map(function (k) {
          return h('th', { scope: 'col' }, t(k));
        }))),
        h('tbody', null, r.settings.map(function (s) {
          return h('tr', { 'data-setting': s.name, 'data-action': s.action }, h('th', { scope: 'row', class: 'mono' }, s.name),
            h('td', { class: 'mono' }, String(s.value)),
            h('td', null, t('migrate.action.' + s.action), s.reason ? h('div', { class: 'muted small' }, s.reason) : null));
        })))));
  }
  C.migrateSection = function () {
    var ready = state.text != null && !state.busy;
    return h('section', { class: 'stack', id: 'migrate' },
      h('h3', null, t('migrate.title')),
      h('p', { class: 'help' }, t('migrate.intro')),
      h('div', { class: 'row' },
        h('input', { type: 'file', id: 'migrate-file', accept: '.json,application/json', 'aria-label': t('migrate.file'),
          onchange: function (e) { choose(e.target); } }),
        state.name ? h('span', { class: 'mono small', id: 'migrate-name' }, state.name) : null,
        h('button', { type: 'button', class: 'btn', id: 'migrate-dry', disabled: !ready, onclick: function () { run(true); } },
          t('migrate.dryRun')),
        h('button', { type: 'button', class: 'btn primary', id: 'migrate-write',
          disabled: !ready || !state.dryOf || state.dryOf.text !== state.text || state.dryOf.forgotten !== state.forgotten,
          onclick: importNow }, t('migrate.import'))),
      h('label', { class: 'row small' },
        h('input', { type: 'checkbox', id: 'migrate-forgotten', checked: state.forgotten,
          onchange: function (e) { state.forgotten = !!e.target.checked; renderPanel('settings'); } }),
        t('migrate.forgotten')),
      state.error ? errorBox(state.error) : null,
      state.report ? report(state.report) : null);
  };
})();
