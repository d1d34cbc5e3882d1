/* Episodes tab: list by status, semantic search, archive / restore / delete with confirmation. */
(function () {
  'use strict';
  var C = window.ltmConsole;
  var S = C.S, $ = C.$, t = C.t, h = C.h, fill = C.fill, fmtTime = C.fmtTime, shortId = C.shortId;
  var call = C.call, spaceBody = C.spaceBody, loadTab = C.loadTab, renderPanel = C.renderPanel;
  var alertBox = C.alertBox, errorBox = C.errorBox, loadingBox = C.loadingBox, toast = C.toast,
    confirmDialog = C.confirmDialog, needSpace = C.needSpace, head = C.head, refreshBtn = C.refreshBtn,
    pager = C.pager, chips = C.chips;

  // The status filter survives a change of space; page and search do not.
  var state = { page: 1, status: 'active', query: '', mode: 'list' };

  function statusBadge(status) { return h('span', { class: 'badge ' + status }, t('status.' + status)); }
  // Whether the fact still holds: automatic recall leaves an expired one out (recall and search mark it).
  function validityBadge(validity) {
    if (validity === 'expired') return h('span', { class: 'badge expired' }, t('validity.expired'));
    if (validity === 'not yet valid') return h('span', { class: 'badge not-yet' }, t('validity.notYet'));
    return null;
  }
  function episodeCard(ep, withScore) {
    var actions = [];
    var label = t('episodes.actionsFor', { id: shortId(ep.id) });
    if (ep.status === 'active') actions.push(actionBtn('archive', ep, 'btn small'));
    if (ep.status === 'archived' || ep.status === 'superseded') actions.push(actionBtn('restore', ep, 'btn small'));
    actions.push(actionBtn('delete', ep, 'btn small danger'));
    var props = [];
    function prop(key, value) { if (value) props.push(h('dt', null, t(key)), h('dd', null, value)); }
    prop('episodes.eventAt', ep.event_at && fmtTime(ep.event_at));
    if (ep.valid_from || ep.valid_until) prop('episodes.validity', fmtTime(ep.valid_from) + ' → ' + fmtTime(ep.valid_until));
    prop('common.sourceRef', ep.source_ref);
    prop('common.message', ep.message && t('common.messageIn', { id: ep.message.message_id, chat: ep.message.scope_key }));
    prop('common.claimType', ep.claim_type && ep.claim_type !== 'unknown' ? C.term('claim.', ep.claim_type) : '');
    prop(ep.status === 'superseded' ? 'episodes.supersededBy' : 'episodes.wasSupersededBy', ep.superseded_by);
    prop('episodes.supersedes', ep.supersedes && ep.supersedes.join(', '));
    return h('article', { class: 'ep', 'data-episode-id': ep.id, 'data-status': ep.status,
      'data-validity': ep.validity || 'current' },
      h('p', { class: 'ep-content' }, ep.content),
      h('div', { class: 'ep-meta' },
        statusBadge(ep.status),
        validityBadge(ep.validity),
        h('span', null, fmtTime(ep.timestamp)),
        ep.sender_name || ep.sender_id ? h('span', null, t('episodes.sender', { name: C.who(ep.sender_name, ep.sender_id) })) : null,
        h('span', null, t('episodes.importance', { n: ep.importance })),
        withScore && ep.score != null ? h('span', null, t('episodes.score', { score: ep.score })) : null,
        ep.tags && ep.tags.length ? chips(ep.tags.map(function (tag) { return '#' + tag; })) : null),
      props.length ? h('dl', { class: 'props small' }, props) : null,
      h('div', { class: 'ep-foot' },
        h('span', { class: 'ep-id mono small', title: ep.id }, ep.id),
        h('div', { class: 'row', role: 'group', 'aria-label': label }, actions)));
  }
  function actionBtn(kind, ep, cls) {
    return h('button', { type: 'button', class: cls, 'data-action': kind,
      onclick: function () { episodeAction(kind, ep); } }, t('episodes.' + kind));
  }
  function episodeAction(kind, ep) {
    confirmDialog({ title: t('confirm.' + kind + 'Title'), body: t('confirm.' + kind), extra: ep.content.length > 160 ? ep.content.slice(0, 160) + '…' : ep.content,
      confirm: t('episodes.' + kind), danger: kind === 'delete' }).then(function (yes) {
      if (!yes) return;
      var view = S.views.episodes;
      call('/episode/' + kind, spaceBody({ episode_id: ep.id })).then(function (data) {
        var fix = data && data.active_correction;
        if (fix) {
          // Two versions of the fact are active now: say which one, and how to keep one.
          view.notice = { kind: 'warn', message: t('done.restoreTwoActive', { id: fix.id, content: fix.content }) };
        } else {
          view.notice = { kind: 'ok', message: t('done.' + kind) };
        }
        toast(t('done.' + kind));
        S.views.audit = {};     // the change is audited
        S.views.export = {};
        return loadTab('episodes');
      }, function (err) {
        view.notice = { kind: 'error', error: err };
        renderPanel('episodes');
        if (err.code === 'fenced') C.loadOverview();
      });
    });
  }

  function render(panel, view) {
    if (needSpace(panel)) return;
    var st = state, d = view.data;
    var input = h('input', { type: 'search', id: 'episode-query', class: 'grow', placeholder: t('episodes.searchPh'),
      'aria-label': t('episodes.searchLabel'), maxlength: '500' });
    input.value = st.query;
    var form = h('form', { role: 'search', id: 'episode-search', novalidate: true, onsubmit: function (e) {
      e.preventDefault();
      var q = input.value.trim();
      st.query = q; st.mode = q ? 'search' : 'list'; st.page = 1;
      view.notice = null;
      loadTab('episodes').then(function () { var el = $('episode-query'); if (el) el.focus(); });
    } }, input, h('button', { type: 'submit', class: 'btn primary' }, t('episodes.searchBtn')),
      st.mode === 'search' ? h('button', { type: 'button', class: 'btn', id: 'episode-clear-search', onclick: function () {
        st.query = ''; st.mode = 'list'; st.page = 1; view.notice = null; loadTab('episodes');
      } }, t('episodes.clearSearch')) : null);
    var select = h('select', { id: 'episode-status', onchange: function () {
      st.status = select.value; st.page = 1; view.notice = null; loadTab('episodes');
    } }, ['active', 'superseded', 'archived', 'all'].map(function (s) {
      return h('option', { value: s, selected: st.status === s }, t('status.' + s));
    }));
    var items = d ? (st.mode === 'search' ? d.results : d.episodes) || [] : [];
    var title = st.mode === 'search' ? t('episodes.results', { query: st.query }) : t('episodes.title');
    var notice = view.notice;
    fill(panel,
      h('div', { class: 'toolbar' }, form,
        h('label', { class: 'field status-field' }, h('span', null, t('episodes.status')), select)),
      notice ? (notice.error ? errorBox(notice.error) : alertBox(notice.kind, notice.message)) : null,
      view.error ? errorBox(view.error) : null,
      head(title, [d && st.mode === 'list' ? h('span', { class: 'muted small' }, t('common.total', { total: d.total })) : null,
        refreshBtn('episodes')]),
      view.loading && !d ? loadingBox() : null,
      d && d.truncated ? alertBox('warn', t('episodes.truncated')) : null,
      d ? (items.length ? h('div', { class: 'list', id: 'episode-list', 'aria-busy': view.loading ? 'true' : 'false' },
        items.map(function (ep) { return episodeCard(ep, st.mode === 'search'); }))
        : h('div', { class: 'empty' }, st.mode === 'search' ? t('episodes.noResults') : t('episodes.empty'))) : null,
      d && st.mode === 'list' && d.pages > 1 ? pager(d.page, d.pages, function (p) { st.page = p; view.notice = null; loadTab('episodes'); }) : null);
  }

  C.defineTab('episodes', {
    load: function () {
      var st = state;
      if (st.mode === 'search') {
        var statuses = st.status === 'all' ? ['active', 'superseded', 'archived'] : [st.status];
        return call('/search', spaceBody({ query: st.query, top_k: 20, statuses: statuses }));
      }
      return call('/episodes', spaceBody({ page: st.page, page_size: 10, status: st.status }));
    },
    render: render,
    reset: function () { state = { page: 1, status: state.status, query: '', mode: 'list' }; }
  });
})();
