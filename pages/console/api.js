/* Calls to the console's page API and their error envelopes.
   Every endpoint answers {ok: true, ...} or {ok: false, error, code}; a transport
   failure or a malformed answer becomes an ApiError too, so callers handle one shape. */
(function () {
  'use strict';
  var C = window.ltmConsole;
  var S = C.S, t = C.t;

  function ApiError(message, code) { this.message = message; this.code = code; }
  /* A success that changes what the overview shows (a space's episodes, pending candidates, last
     change, the fences, the isolation) says so (changes_spaces: the plugin reads it from its route
     table): the overview is read again, so the space list never shows a count an action just changed
     until someone presses Refresh. */
  function call(endpoint, body) {
    return langbot.api(endpoint, body || {}, 'POST').then(function (data) {
      if (!data || typeof data !== 'object') throw new ApiError(t('common.requestFailed'), 'bad_response');
      if (data.ok === false) throw new ApiError(data.error || t('common.requestFailed'), data.code || 'error');
      if (data.changes_spaces === true && C.loadOverview) C.loadOverview();
      return data;
    }, function (err) {
      if (err instanceof ApiError) throw err;
      throw new ApiError(t('common.requestFailed'), 'transport');
    });
  }
  // The selected space, plus the endpoint's own fields.
  function spaceBody(extra) {
    var body = { space: { scope_key: S.space.scope_key, user_key: S.space.user_key } };
    if (extra) Object.keys(extra).forEach(function (k) { body[k] = extra[k]; });
    return body;
  }

  C.ApiError = ApiError; C.call = call; C.spaceBody = spaceBody;
})();
