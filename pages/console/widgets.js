/* Building blocks shared by the tabs: alerts, toast, the confirm dialog, copyable JSON,
   panel heads, pager and profile cards. */
(function () {
  'use strict';
  var C = window.ltmConsole;
  var S = C.S, $ = C.$, t = C.t, h = C.h, fill = C.fill, fmtTime = C.fmtTime;

  function alertBox(kind, message, actions) {
    return h('div', { class: 'alert ' + kind, role: kind === 'error' ? 'alert' : null },
      h('div', null, message), actions ? h('div', { class: 'row' }, actions) : null);
  }
  function errorBox(err) {
    var actions = null;
    if (err && err.code === 'fenced') {
      actions = h('button', { type: 'button', class: 'btn small', onclick: function () { C.selectTab('diagnostics', true); } },
        t('common.goDiagnostics'));
    }
    var message = (err && err.message) || t('common.requestFailed');
    if (err && err.code === 'fenced') message = h('div', null, h('strong', null, t('common.fenced')), h('div', null, message));
    return alertBox('error', message, actions);
  }
  function loadingBox() { return h('p', { class: 'muted', role: 'status' }, t('app.loading')); }

  var toastTimer = null;
  function toast(message) {
    var el = $('toast');
    el.textContent = message;
    el.hidden = false;
    clearTimeout(toastTimer);
    toastTimer = setTimeout(function () { el.hidden = true; }, 4000);
  }

  // ---------- confirm dialog (confirm() is blocked in the sandbox)
  var dialogState = null;
  function confirmDialog(opts) {
    return new Promise(function (resolve) {
      var overlay = $('dialog');
      $('dialog-title').textContent = opts.title;
      $('dialog-body').textContent = opts.body;
      $('dialog-extra').textContent = opts.extra || '';
      $('dialog-extra').hidden = !opts.extra;
      var ok = $('dialog-ok');
      ok.textContent = opts.confirm || t('common.confirm');
      ok.className = 'btn ' + (opts.danger ? 'danger solid' : 'primary');
      dialogState = { resolve: resolve, returnFocus: document.activeElement };
      overlay.hidden = false;
      $('dialog-cancel').focus();
    });
  }
  function closeDialog(result) {
    if (!dialogState) return;
    var st = dialogState;
    dialogState = null;
    $('dialog').hidden = true;
    if (st.returnFocus && document.contains(st.returnFocus)) st.returnFocus.focus();
    st.resolve(result);
  }
  $('dialog-ok').addEventListener('click', function () { closeDialog(true); });
  $('dialog-cancel').addEventListener('click', function () { closeDialog(false); });
  $('dialog').addEventListener('click', function (e) { if (e.target === $('dialog')) closeDialog(false); });
  document.addEventListener('keydown', function (e) {
    if (!dialogState) return;
    if (e.key === 'Escape') { e.preventDefault(); closeDialog(false); return; }
    if (e.key === 'Tab') {     // keep focus inside the dialog
      var a = $('dialog-cancel'), b = $('dialog-ok');
      if (e.shiftKey && document.activeElement === a) { e.preventDefault(); b.focus(); }
      else if (!e.shiftKey && document.activeElement === b) { e.preventDefault(); a.focus(); }
      else if (document.activeElement !== a && document.activeElement !== b) { e.preventDefault(); a.focus(); }
    }
  });

  // ---------- copy (navigator.clipboard may be blocked in the sandboxed iframe)
  function copyFrom(textarea) {
    textarea.focus();
    textarea.select();
    var ok = false;
    try { ok = document.execCommand('copy'); } catch (e) { ok = false; }
    if (ok) { toast(t('common.copied')); return; }
    if (navigator.clipboard && navigator.clipboard.writeText) {
      navigator.clipboard.writeText(textarea.value).then(function () { toast(t('common.copied')); },
        function () { toast(t('common.copyManual')); });
    } else {
      toast(t('common.copyManual'));
    }
  }
  function jsonBlock(id, label, value) {
    var area = h('textarea', { id: id, class: 'export-area', readonly: true, spellcheck: 'false', 'aria-label': label, rows: 16 });
    area.value = JSON.stringify(value, null, 2);
    return h('div', { class: 'stack' },
      h('div', { class: 'panel-head', style: 'margin-bottom:0' }, h('h3', null, label),
        h('button', { type: 'button', class: 'btn', id: id + '-copy', onclick: function () { copyFrom(area); } }, t('common.copy'))),
      area);
  }

  // ---------- panel parts
  function needSpace(panel) {
    if (S.space) return false;
    fill(panel, h('div', { class: 'empty' }, t('common.selectSpace')));
    return true;
  }
  function head(title, tools) {
    return h('div', { class: 'panel-head' }, h('h2', null, title), tools ? h('div', { class: 'row' }, tools) : null);
  }
  function refreshBtn(tab) {
    return h('button', { type: 'button', class: 'btn small', onclick: function () { C.loadTab(tab); } }, t('app.refresh'));
  }
  function pager(page, pages, go) {
    return h('nav', { class: 'pager', 'aria-label': t('common.page', { page: page, pages: pages }) },
      h('button', { type: 'button', class: 'btn small', disabled: page <= 1, onclick: function () { go(page - 1); } }, t('common.prev')),
      h('span', { class: 'muted small' }, t('common.page', { page: page, pages: pages })),
      h('button', { type: 'button', class: 'btn small', disabled: page >= pages, onclick: function () { go(page + 1); } }, t('common.next')));
  }
  function profileCard(title, profile, id) {
    var p = profile || {};
    var empty = !p.name && !(p.traits || []).length && !(p.preferences || []).length && !p.notes;
    return h('article', { class: 'card', id: id || null },
      h('h3', null, title),
      empty ? h('p', { class: 'muted small', style: 'margin-top:6px' }, t('profiles.empty')) :
        h('dl', { class: 'props' },
          h('dt', null, t('profiles.name')), h('dd', null, p.name || t('common.none')),
          h('dt', null, t('profiles.traits')), h('dd', null, chips(p.traits, earlier(p, 'traits'))),
          h('dt', null, t('profiles.preferences')), h('dd', null, chips(p.preferences, earlier(p, 'preferences'))),
          h('dt', null, t('profiles.notes')), h('dd', null, p.notes || t('common.none')),
          h('dt', null, t('profiles.updated')), h('dd', { class: 'small' }, fmtTime(p.updated_at))));
  }
  // A named fact's earlier values (newest first) by its current value, shown as the chip's tooltip.
  function earlier(p, field) {
    var found = Object.create(null), facts = (p.facts || {})[field] || {};
    Object.keys(facts).forEach(function (key) {
      var f = facts[key];
      if (f.value && (f.history || []).length) {
        found[f.value] = key + ': ' + f.history.slice().reverse().map(function (x) { return '\u2190 ' + x.value; }).join(' ');
      }
    });
    return found;
  }
  function chips(list, titles) {
    if (!list || !list.length) return t('common.none');
    titles = titles || Object.create(null);
    return h('span', { class: 'chips' }, list.map(function (x) {
      return h('span', { class: titles[x] ? 'chip has-history' : 'chip', title: titles[x] || null }, x);
    }));
  }

  C.alertBox = alertBox; C.errorBox = errorBox; C.loadingBox = loadingBox; C.toast = toast;
  C.confirmDialog = confirmDialog; C.jsonBlock = jsonBlock;
  C.needSpace = needSpace; C.head = head; C.refreshBtn = refreshBtn; C.pager = pager;
  C.profileCard = profileCard; C.chips = chips;
})();
