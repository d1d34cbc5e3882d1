/* Settings tab: the memory knowledge base's effective settings, where each comes from, and the
   installation's overrides (set one, or reset it to the creation value). Not tied to a space. */
(function () {
  'use strict';
  var C = window.ltmConsole;
  var S = C.S, t = C.t, h = C.h, fill = C.fill;
  var call = C.call, renderPanel = C.renderPanel;
  var alertBox = C.alertBox, errorBox = C.errorBox, loadingBox = C.loadingBox, toast = C.toast,
    confirmDialog = C.confirmDialog, head = C.head, refreshBtn = C.refreshBtn;

  function shown(value) {
    if (value === true) return 'true';
    if (value === false) return 'false';
    return value === '' || value == null ? t('settings.empty') : String(value);
  }
  // The input of one setting: a choice for flags and word settings, text otherwise.
  function editor(item) {
    var id = 'setting-' + item.name;
    var options = typeof item.value === 'boolean' ? ['true', 'false'] : item.choices || [];
    if (options.length) {
      return h('select', { id: id, 'aria-label': t('settings.newValue', { name: item.name }) }, options.map(function (o) {
        return h('option', { value: o, selected: shown(item.value) === o }, o);
      }));
    }
    var input = h('input', { type: 'text', id: id, class: 'mono', 'aria-label': t('settings.newValue', { name: item.name }),
      autocomplete: 'off', spellcheck: 'false' });
    input.value = item.value == null ? '' : String(item.value);
    return input;
  }
  function row(view, item) {
    var input = editor(item);
    var override = item.origin === 'override';
    return h('tr', { 'data-setting': item.name, 'data-origin': item.origin },
      h('th', { scope: 'row', class: 'mono' }, item.name),
      h('td', { class: 'mono setting-value' }, shown(item.value)),
      h('td', null, h('span', { class: 'badge ' + (override ? 'amber' : '') }, t('origin.' + item.origin)),
        override ? h('div', { class: 'muted small' }, t('settings.created', { value: shown(item.creation) })) : null),
      h('td', null, h('div', { class: 'row' }, input,
        h('button', { type: 'button', class: 'btn small primary', 'data-action': 'set', disabled: view.busy,
          onclick: function () { change(view, item, '/settings/set', { name: item.name, value: input.value }); } },
          t('settings.set')),
        override ? h('button', { type: 'button', class: 'btn small', 'data-action': 'reset', disabled: view.busy,
          onclick: function () { change(view, item, '/settings/reset', { name: item.name }); } }, t('settings.reset')) : null)));
  }
  function change(view, item, endpoint, body) {
    var reset = endpoint === '/settings/reset';
    var next = reset ? shown(item.creation) : body.value;
    confirmDialog({ title: t('settings.confirmTitle', { name: item.name }),
      body: t('settings.confirm', { name: item.name, before: shown(item.value), after: next === '' ? t('settings.empty') : next }),
      extra: t('settings.confirmExtra'), confirm: reset ? t('settings.reset') : t('settings.set') }).then(function (yes) {
      if (!yes) return;
      view.busy = true; view.notice = null; renderPanel('settings');
      call(endpoint, body).then(function (res) {
        view.data = res;
        view.notice = { kind: 'ok', message: res.changed ? t('settings.saved', { name: item.name, value: shown(res.setting.value) })
          : t('settings.unchanged', { name: item.name }) };
        toast(view.notice.message);
        S.views.review = {};   // it shows whether consolidation and candidate extraction are on
      }, function (err) { view.notice = { kind: 'error', error: err }; })
        .then(function () { view.busy = false; renderPanel('settings'); });
    });
  }
  function render(panel, view) {
    var d = view.data, notice = view.notice;
    fill(panel,
      head(t('tab.settings'), refreshBtn('settings')),
      h('p', { class: 'help' }, t('settings.intro')),
      notice ? (notice.error ? errorBox(notice.error) : alertBox(notice.kind, notice.message)) : null,
      view.error ? errorBox(view.error) : null,
      view.loading && !d ? loadingBox() : null,
      d ? h('div', { class: 'stack' },
        h('p', { class: 'muted small', id: 'settings-summary' }, d.overridden ? t('settings.overridden', { count: d.overridden })
          : t('settings.noOverrides')),
        h('div', { class: 'table-wrap' }, h('table', { class: 'settings', id: 'settings-table' },
          h('thead', null, h('tr', null, ['settings.name', 'settings.value', 'settings.origin', 'settings.change'].map(function (k) {
            return h('th', { scope: 'col' }, t(k));
          }))),
          h('tbody', null, d.settings.map(function (item) { return row(view, item); }))))) : null,
      d && C.migrateSection ? C.migrateSection() : null);
  }

  C.defineTab('settings', {
    load: function () { return call('/settings', {}); },
    render: render,
    needsSpace: false
  });
})();
