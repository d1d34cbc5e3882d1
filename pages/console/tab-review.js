/* Review tab: two parts, each with its own loader and renderer, loaded side by side.
   - drafts: consolidation drafts (for now: whether consolidation is switched on);
   - candidates: the selected space's candidate queue, with accept / reject.
   A part that fails to load shows its own error; the other part still renders. */
(function () {
  'use strict';
  var C = window.ltmConsole;
  var S = C.S, t = C.t, h = C.h, fill = C.fill, fmtTime = C.fmtTime, shortId = C.shortId;
  var call = C.call, spaceBody = C.spaceBody, loadTab = C.loadTab, renderPanel = C.renderPanel;
  var alertBox = C.alertBox, errorBox = C.errorBox, loadingBox = C.loadingBox, head = C.head, refreshBtn = C.refreshBtn,
    toast = C.toast, confirmDialog = C.confirmDialog, pager = C.pager;

  function settled(promise) {
    return promise.then(function (data) { return { data: data }; }, function (err) { return { error: err }; });
  }
  function flag(key, on) {
    return h('div', { class: 'stat' }, h('div', { class: 'k' }, t(key)), h('div', { class: 'v' }, t(on ? 'review.enabled' : 'review.disabled')));
  }

  // ---------------------------------------------------------------- drafts (consolidation)
  var drafts = {
    load: function () { return call('/review', S.space ? spaceBody() : {}); },
    render: function (part) {
      if (part.error) return errorBox(part.error);
      var d = part.data;
      return h('div', { class: 'stack' },
        h('h3', null, t('review.drafts')),
        alertBox('info', d.enabled ? d.message : t('review.off')),
        h('div', { class: 'stats wide' }, flag('review.consolidation', d.settings.consolidation_enabled)));
    }
  };

  // ---------------------------------------------------------------- candidates (the candidate queue)
  var cand = { page: 1, all: false, notice: null };
  var STATUS_BADGE = { pending: 'amber', accepted: 'green', rejected: '' };

  function candidateWhat(c) {
    if (c.kind === 'profile') return t('candidates.kindProfile', { target: t('candidates.target.' + c.target), field: t('candidates.field.' + c.field) });
    return t(c.kind === 'ignore' ? 'candidates.kindIgnore' : 'candidates.kindEpisode');
  }
  function candidateCard(c) {
    var actions = [];
    if (c.status === 'pending') {
      if (c.kind !== 'ignore') actions.push(actionBtn('accept', c, 'btn small primary'));
      actions.push(actionBtn('reject', c, 'btn small'));
    }
    var props = [];
    function prop(key, value) { if (value) props.push(h('dt', null, t(key)), h('dd', null, value)); }
    prop('candidates.sourceRef', c.source_ref);
    prop('candidates.claim', c.claim_type);
    if (c.decided_at) prop('candidates.decided', t('candidates.decidedBy', { by: c.decided_by || t('common.none'), time: fmtTime(c.decided_at) }));
    if (c.applied_type) prop('candidates.applied', c.applied_type + ' ' + c.applied_id);
    var said = c.evidence && c.evidence.trim() !== c.content;
    return h('article', { class: 'ep', 'data-candidate-id': c.id, 'data-status': c.status, 'data-kind': c.kind },
      h('p', { class: 'ep-content' }, c.content),
      said ? h('p', { class: 'muted small' }, t('candidates.said', { text: c.evidence })) : null,
      h('div', { class: 'ep-meta' },
        h('span', { class: 'badge ' + (STATUS_BADGE[c.status] || '') }, t('candidates.status.' + c.status)),
        h('span', null, candidateWhat(c)),
        h('span', null, fmtTime(c.created_at)),
        c.sender_name || c.sender_id ? h('span', null, t('candidates.from', { name: c.sender_name || c.sender_id })) : null,
        h('span', null, t('candidates.origin', { origin: c.origin, rule: c.rule }))),
      props.length ? h('dl', { class: 'props small' }, props) : null,
      h('div', { class: 'ep-foot' },
        h('span', { class: 'ep-id mono small', title: c.id }, c.id),
        actions.length ? h('div', { class: 'row', role: 'group', 'aria-label': t('candidates.actionsFor', { id: shortId(c.id) }) }, actions) : null));
  }
  function actionBtn(kind, c, cls) {
    return h('button', { type: 'button', class: cls, 'data-action': kind,
      onclick: function () { candidateAction(kind, c); } }, t('candidates.' + kind));
  }
  function candidateAction(kind, c) {
    var title = kind === 'accept' ? 'candidates.confirmAcceptTitle' : 'candidates.confirmRejectTitle';
    var body = kind === 'accept' ? 'candidates.confirmAccept' : 'candidates.confirmReject';
    confirmDialog({ title: t(title), body: t(body), extra: c.content.length > 160 ? c.content.slice(0, 160) + '…' : c.content,
      confirm: t('candidates.' + kind) }).then(function (yes) {
      if (!yes) return;
      var done = t(kind === 'accept' ? 'candidates.doneAccept' : 'candidates.doneReject');
      call('/candidate/' + kind, spaceBody({ candidate_id: c.id })).then(function () {
        cand.notice = { kind: 'ok', message: done };
        toast(done);
        ['audit', 'episodes', 'profiles', 'export'].forEach(function (tab) { S.views[tab] = {}; });  // changed memory
        return loadTab('review');
      }, function (err) {
        cand.notice = { kind: 'error', error: err };
        renderPanel('review');
        if (err.code === 'fenced') C.loadOverview();
      });
    });
  }

  var candidates = {
    load: function () {
      if (!S.space) return Promise.resolve(null);
      return call('/candidates', spaceBody({ page: cand.page, page_size: 10, all_statuses: cand.all }));
    },
    render: function (part) {
      var title = h('h3', null, t('candidates.title'));
      if (!S.space) return h('div', { class: 'stack' }, title, h('div', { class: 'empty' }, t('candidates.selectSpace')));
      if (part.error) return h('div', { class: 'stack' }, title, errorBox(part.error));
      var d = part.data, s = d.settings;
      var toggle = h('input', { type: 'checkbox', id: 'candidates-all', checked: cand.all, onchange: function () {
        cand.all = toggle.checked; cand.page = 1; cand.notice = null; loadTab('review');
      } });
      var notice = cand.notice;
      return h('div', { class: 'stack', id: 'candidate-queue' },
        title,
        h('p', { class: 'help' }, t('candidates.help')),
        h('div', { class: 'stats wide' }, flag('review.candidates', s.enabled),
          h('div', { class: 'stat' }, h('div', { class: 'k' }, t('candidates.countsLabel')),
            h('div', { class: 'v', id: 'candidate-counts' }, t('candidates.counts', d.counts)))),
        !s.enabled ? alertBox('warn', t('candidates.off')) : null,
        s.enabled && s.auto_apply ? alertBox('warn', t('candidates.autoApply')) : null,
        s.enabled && s.model ? h('p', { class: 'help' }, t('candidates.model')) : null,
        d.refused ? alertBox('warn', t('candidates.refused', { n: d.refused, limit: d.limit, time: fmtTime(d.last_refused_at) })) : null,
        notice ? (notice.error ? errorBox(notice.error) : alertBox(notice.kind, notice.message)) : null,
        h('label', { class: 'check' }, toggle, h('span', null, t('candidates.showAll'))),
        d.candidates.length ? h('div', { class: 'list', id: 'candidate-list' }, d.candidates.map(candidateCard))
          : h('div', { class: 'empty' }, t(cand.all ? 'candidates.emptyAll' : 'candidates.empty')),
        d.pages > 1 ? pager(d.page, d.pages, function (p) { cand.page = p; cand.notice = null; loadTab('review'); }) : null);
    }
  };

  C.defineTab('review', {
    needsSpace: false,
    load: function () {
      return Promise.all([settled(drafts.load()), settled(candidates.load())]).then(function (parts) {
        return { drafts: parts[0], candidates: parts[1] };
      });
    },
    render: function (panel, view) {
      var d = view.data;
      fill(panel,
        head(t('review.title'), refreshBtn('review')),
        view.error ? errorBox(view.error) : null,
        view.loading && !d ? loadingBox() : null,
        d ? h('div', { class: 'stack' },
          h('section', { id: 'review-drafts' }, drafts.render(d.drafts)),
          h('section', { id: 'review-candidates' }, candidates.render(d.candidates))) : null);
    },
    reset: function () { cand = { page: 1, all: cand.all, notice: null }; }
  });
})();
