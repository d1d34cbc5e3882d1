/* Calls to the console's page API and their error envelopes.
   Every endpoint answers {ok: true, ...} or {ok: false, error, code}; a transport
   failure or a malformed answer becomes an ApiError too, so callers handle one shape. */
(function () {
  'use strict';
  var C = window.ltmConsole;
  var S = C.S, t = C.t;

  function ApiError(message, code) { this.message = message; this.code = code; }
  function call(endpoint, body) {
    return langbot.api(endpoint, body || {}, 'POST').then(function (data) {
      if (!data || typeof data !== 'object') throw new ApiError(t('common.requestFailed'), 'bad_response');
      if (data.ok === false) throw new ApiError(data.error || t('common.requestFailed'), data.code || 'error');
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
