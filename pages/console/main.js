/* Console shell: header, the memory-space sidebar, tab switching, and start-up.
   Runs after every tab-*.js, so all tabs are registered by now. */
(function () {
  'use strict';
  var C = window.ltmConsole;
  var S = C.S, TABS = C.TABS, $ = C.$, t = C.t, h = C.h, fill = C.fill, fmtTime = C.fmtTime;
  var call = C.call, loadTab = C.loadTab, renderPanel = C.renderPanel;
  var alertBox = C.alertBox, errorBox = C.errorBox, loadingBox = C.loadingBox;

  TABS.forEach(function (tab) {
    if (!C.tabs[tab]) throw new Error('Memory Console: no script defines the "' + tab + '" tab');
  });

  // ---------- header, sidebar, space
  function renderHeader() {
    var line = $('kb-line'), ov = S.overview;
    if (S.overviewError) { fill(line, h('span', { class: 'badge red' }, t('common.error')), ' ', S.overviewError.message); return; }
    if (!ov) { fill(line, t('app.loading')); return; }
    var parts = [];
    if (ov.kb) parts.push(h('span', null, t('app.kb', { id: ov.kb.id, isolation: C.term('isolation.', ov.kb.settings.isolation) })));
    else parts.push(h('span', { class: 'badge amber' }, t('level.amber')), ' ', t('app.noKb'));
    if (ov.fences && ov.fences.length) parts.push(' · ', h('span', { class: 'badge amber' }, t('app.fences', { count: ov.fences.length })));
    fill(line, parts);
  }
  // A chat as an admin tells it apart: its kind, a name (the last speaker of a private chat) or the
  // tail of its id, and its bot; raw keys only when "Advanced: raw keys" is open.
  // An id up to 20 characters is shown whole (a QQ or Telegram group number); a longer one (a uuid) by
  // its last 8, which stays the same for that chat.
  function tail(id) { id = String(id || ''); return id.length > 20 ? '…' + id.slice(-8) : id; }
  // LangBot's WebUI debug chat: an in-memory bot whose Group Chat is always `websocketgroup` and whose
  // Private Chat is a new `websocket_<connection>` person on every visit (docs/HOST-FACTS.md 11.3).
  var DEBUG_BOT = 'websocket-proxy-bot', DEBUG_GROUP = 'websocketgroup';
  function spaceLabel(sp) {
    var kind = sp.chat_type ? C.term('chat.', sp.chat_type) : t('spaces.otherKind');
    if (sp.bot_uuid === DEBUG_BOT) {
      if (sp.chat_type === 'group' && sp.chat_id === DEBUG_GROUP) return t('spaces.debugGroup');
      if (sp.chat_type === 'person') return t('spaces.debugPerson', { visit: tail(String(sp.chat_id || '').replace(/^websocket_/, '')) });
    }
    // The platform's names (the latest turn's; ltm/chat_labels.py): a group's name, a private chat's speaker.
    var name = sp.chat_type === 'group' ? sp.chat_name : sp.chat_type === 'person' ? sp.sender_name || sp.last_speaker : '';
    var who = name ? name + ' (' + tail(sp.chat_id) + ')' : tail(sp.chat_id || sp.scope_key);
    return t('spaces.label', { kind: kind, name: who, bot: sp.bot_uuid ? tail(sp.bot_uuid) : t('common.none') });
  }
  function spaceMeta(sp) {
    var when = sp.last_activity ? t('spaces.changed', { time: fmtTime(sp.last_activity) }) : t('spaces.neverChanged');
    var episodes = sp.episodes == null ? '?' : sp.episodes;
    return t(episodes === 1 ? 'spaces.metaOne' : 'spaces.meta', { when: when, episodes: episodes, pending: sp.pending_candidates || 0 });
  }
  function spaceText(sp) {
    return [spaceLabel(sp), sp.last_speaker || '', sp.sender_name || '', sp.scope_key, sp.user_key].join(' ').toLowerCase();
  }
  function renderScopes() {
    var list = $('scope-list'), ov = S.overview, count = $('scope-count');
    if (!ov) { fill(list, h('li', null, loadingBox())); return; }
    if (!ov.scopes.length) { fill(list, h('li', { class: 'muted small' }, t('sidebar.empty'))); fill(count, null); return; }
    var words = $('scope-filter').value.trim().toLowerCase().split(/\s+/).filter(Boolean);
    var shown = ov.scopes.filter(function (sp) {
      var text = spaceText(sp);
      return words.every(function (w) { return text.indexOf(w) !== -1; });
    });
    fill(count, t('spaces.shown', { shown: shown.length, total: ov.scopes.length }));
    if (!shown.length) { fill(list, h('li', { class: 'muted small', id: 'scope-none' }, t('spaces.noMatch'))); return; }
    fill(list, shown.map(function (sp) {
      var selected = S.space && S.space.scope_key === sp.scope_key && S.space.user_key === sp.user_key;
      return h('li', null, h('button', {
        type: 'button', class: 'scope-btn', 'aria-pressed': selected ? 'true' : 'false',
        'data-scope-key': sp.scope_key, 'data-user-key': sp.user_key, title: sp.scope_key,
        onclick: function () { selectSpace({ scope_key: sp.scope_key, user_key: sp.user_key }, true); }
      }, h('span', { class: 'label' }, spaceLabel(sp)),
        h('span', { class: 'sub' }, spaceMeta(sp)),
        h('span', { class: 'raw-key mono' }, sp.scope_key + (sp.user_key !== sp.scope_key ? ' → ' + sp.user_key : ''))));
    }));
  }
  function renderSpacebar() {
    var bar = $('spacebar');
    if (!S.space) { fill(bar, h('span', { class: 'muted' }, t('space.none'))); return; }
    fill(bar,
      h('div', { class: 'kv' }, h('span', { class: 'k' }, t('space.scope')), h('span', { class: 'mono', id: 'current-scope' }, S.space.scope_key)),
      h('div', { class: 'kv' }, h('span', { class: 'k' }, t('space.user')), h('span', { class: 'mono', id: 'current-user' }, S.space.user_key)));
  }
  function setSidebar(open) {
    $('layout').setAttribute('data-sidebar', open ? 'open' : 'closed');
    $('sidebar-toggle').setAttribute('aria-expanded', open ? 'true' : 'false');
  }
  var narrowQuery = window.matchMedia('(max-width: 800px)');
  function narrow() { return narrowQuery.matches; }
  // Going narrow with a space selected: the space list folds away behind its toggle.
  narrowQuery.addEventListener('change', function () { if (narrow() && S.space) setSidebar(false); });

  function selectSpace(space, fromUser) {
    S.space = { scope_key: space.scope_key, user_key: space.user_key };
    // Kept by the plugin: LangBot's WebUI reloads the page on a language switch, and this frame keeps nothing.
    if (fromUser) call('/view/open', { space: S.space }).then(null, function () { /* only a convenience */ });
    TABS.forEach(function (tab) {
      S.views[tab] = {};
      if (C.tabs[tab].reset) C.tabs[tab].reset();
    });
    $('raw-scope').value = space.scope_key;
    $('raw-user').value = space.user_key;
    renderScopes();
    renderSpacebar();
    TABS.forEach(renderPanel);
    loadTab(S.tab);
    if (fromUser && narrow()) { setSidebar(false); $('tab-' + S.tab).focus(); }
  }

  function loadOverview() {
    return call('/overview', {}).then(function (data) {
      S.overview = data; S.overviewError = null;
    }, function (err) {
      S.overviewError = err;
    }).then(function () {
      renderHeader(); renderScopes();
      if (S.tab === 'diagnostics') renderPanel('diagnostics');
    });
  }

  $('refresh-overview').addEventListener('click', function () { loadOverview(); if (S.space) loadTab(S.tab); });
  $('scope-filter').addEventListener('input', renderScopes);
  $('raw-details').addEventListener('toggle', function () {
    $('layout').classList.toggle('raw-keys', $('raw-details').open);
  });
  $('sidebar-toggle').addEventListener('click', function () {
    setSidebar($('layout').getAttribute('data-sidebar') !== 'open');
  });
  $('derive-form').addEventListener('submit', function (e) {
    e.preventDefault();
    var msg = $('derive-msg');
    var session = $('derive-session').value.trim();
    if (!session) { fill(msg, alertBox('error', t('common.required', { field: t('field.sessionName') }))); $('derive-session').focus(); return; }
    var body = { session_name: session };
    var bot = $('derive-bot').value.trim();
    if (bot) body.bot_uuid = bot;
    if ($('derive-isolation').value) body.isolation = $('derive-isolation').value;
    fill(msg, loadingBox());
    call('/derive', body).then(function (data) {
      fill(msg, data.note ? alertBox('warn', data.note) : null);
      selectSpace({ scope_key: data.scope_key, user_key: data.user_key }, true);
    }, function (err) { fill(msg, errorBox(err)); });
  });
  $('raw-form').addEventListener('submit', function (e) {
    e.preventDefault();
    var scope = $('raw-scope').value.trim(), user = $('raw-user').value.trim(), msg = $('raw-msg');
    if (!scope || !user) {
      fill(msg, alertBox('error', t('common.required', { field: !scope ? 'scope_key' : 'user_key' })));
      (!scope ? $('raw-scope') : $('raw-user')).focus();
      return;
    }
    fill(msg, null);
    selectSpace({ scope_key: scope, user_key: user }, true);
  });

  // ---------- tabs (WAI-ARIA tabs: arrow keys, Home, End)
  function selectTab(tab, focus) {
    S.tab = tab;
    TABS.forEach(function (name) {
      var on = name === tab, btn = $('tab-' + name);
      btn.setAttribute('aria-selected', on ? 'true' : 'false');
      btn.tabIndex = on ? 0 : -1;
      $('panel-' + name).hidden = !on;
    });
    if (focus) $('tab-' + tab).focus();
    renderPanel(tab);
    var view = S.views[tab];
    if (!view.data && !view.loading && !view.error) loadTab(tab);
  }
  $('tablist').addEventListener('click', function (e) {
    var btn = e.target.closest('[role="tab"]');
    if (btn) selectTab(btn.getAttribute('data-tab'), false);
  });
  $('tablist').addEventListener('keydown', function (e) {
    var focused = e.target.closest('[role="tab"]');
    var i = TABS.indexOf(focused ? focused.getAttribute('data-tab') : S.tab), next = null;
    if (e.key === 'ArrowRight' || e.key === 'ArrowDown') next = TABS[(i + 1) % TABS.length];
    else if (e.key === 'ArrowLeft' || e.key === 'ArrowUp') next = TABS[(i + TABS.length - 1) % TABS.length];
    else if (e.key === 'Home') next = TABS[0];
    else if (e.key === 'End') next = TABS[TABS.length - 1];
    if (next) { e.preventDefault(); selectTab(next, true); }
  });

  C.selectTab = selectTab; C.selectSpace = selectSpace; C.loadOverview = loadOverview;

  // ---------- start
  function rerender() {
    renderHeader(); renderScopes(); renderSpacebar();
    TABS.forEach(renderPanel);
  }
  langbot.onLanguageChange(function () { rerender(); });
  langbot.onThemeChange(function () { /* colors follow the CSS variables the bridge sets */ });
  langbot.onReady(function () {
    if (S.started) return;
    S.started = true;
    setSidebar(true);
    selectTab(TABS[0], false);
    rerender();
    loadOverview();
    // The space opened before a reload (the WebUI reloads on a language switch), unless one was picked since.
    call('/view', {}).then(function (data) {
      if (data.space && !S.space) selectSpace(data.space, false);
    }, function () { /* no space is opened: the list is there */ });
  });
})();
