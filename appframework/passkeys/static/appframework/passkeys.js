/* Passkeys on the suite's account pages: no dependencies, no CDN, no inline script (a
 * strict Content-Security-Policy keeps working).
 *
 * Each <form data-passkey="KIND" data-options="URL"> is a WebAuthn ceremony: on submit
 * the options are fetched (POST kind=KIND with the form's CSRF token; the server keeps
 * the challenge in this session), navigator.credentials runs, and the form is posted
 * with the answer in its "credential" field. KIND "register" creates a credential;
 * "login", "challenge" and "confirm" get one. A "login" form marked data-passkey-autofill
 * also offers this site's passkeys in the username field's autofill (conditional UI),
 * where the browser supports it.
 */
(function () {
  "use strict";

  if (!window.PublicKeyCredential || !navigator.credentials) {
    document.querySelectorAll("form[data-passkey]").forEach(function (form) {
      form.hidden = true;
    });
    return;
  }

  function toBase64url(buffer) {
    var bytes = new Uint8Array(buffer);
    var text = "";
    for (var i = 0; i < bytes.length; i++) text += String.fromCharCode(bytes[i]);
    return btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }

  function fromBase64url(value) {
    var text = atob(value.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((value.length + 3) % 4));
    var bytes = new Uint8Array(text.length);
    for (var i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
    return bytes.buffer;
  }

  function descriptors(list) {
    return (list || []).map(function (item) {
      return Object.assign({}, item, { id: fromBase64url(item.id) });
    });
  }

  function creationOptions(options) {
    return Object.assign({}, options, {
      challenge: fromBase64url(options.challenge),
      user: Object.assign({}, options.user, { id: fromBase64url(options.user.id) }),
      excludeCredentials: descriptors(options.excludeCredentials),
    });
  }

  function requestOptions(options) {
    return Object.assign({}, options, {
      challenge: fromBase64url(options.challenge),
      allowCredentials: descriptors(options.allowCredentials),
    });
  }

  function answer(credential) {
    var response = credential.response;
    var json = {
      id: credential.id,
      rawId: toBase64url(credential.rawId),
      type: credential.type,
      authenticatorAttachment: credential.authenticatorAttachment || null,
      clientExtensionResults: credential.getClientExtensionResults ? credential.getClientExtensionResults() : {},
      response: { clientDataJSON: toBase64url(response.clientDataJSON) },
    };
    if (response.attestationObject) {
      json.response.attestationObject = toBase64url(response.attestationObject);
      json.response.transports = response.getTransports ? response.getTransports() : [];
    } else {
      json.response.authenticatorData = toBase64url(response.authenticatorData);
      json.response.signature = toBase64url(response.signature);
      if (response.userHandle) json.response.userHandle = toBase64url(response.userHandle);
    }
    return JSON.stringify(json);
  }

  function token(form) {
    var field = form.querySelector("input[name=_token], input[name=csrfmiddlewaretoken]");
    return field ? field.value : "";
  }

  function fetchOptions(form) {
    var body = new URLSearchParams({ kind: form.dataset.passkey, _token: token(form) });
    return fetch(form.dataset.options, {
      method: "POST",
      credentials: "same-origin",
      headers: { Accept: "application/json", "X-CSRF-Token": token(form) },
      body: body,
    }).then(function (response) {
      return response.json().then(function (data) {
        if (!response.ok) throw new Error(data.detail || data.title || messages.refused);
        return data.publicKey;
      });
    });
  }

  // The page's sentences, in its language (elements/passkey_script.html); English if
  // a page of the project's loads the script alone.
  var messages = (function () {
    var node = document.getElementById("af-passkey-messages");
    var given = {};
    try {
      given = node ? JSON.parse(node.textContent) : {};
    } catch (ignored) {
      given = {};
    }
    return Object.assign(
      {
        refused: "The passkey request was refused.",
        cancelled: "The passkey request was cancelled or timed out.",
        domain: "Passkeys need this site's domain name (not an IP address) and HTTPS, or localhost.",
        failed: "The passkey request failed.",
      },
      given
    );
  })();

  function say(form, text) {
    var status = form.querySelector("[data-passkey-status]");
    if (status) status.textContent = text;
  }

  function send(form, credential) {
    form.querySelector("input[name=credential]").value = answer(credential);
    // submit() fires no submit event: the handler below does not run again.
    form.submit();
  }

  function ceremony(form, extra) {
    return fetchOptions(form).then(function (options) {
      if (form.dataset.passkey === "register") {
        return navigator.credentials.create({ publicKey: creationOptions(options) });
      }
      return navigator.credentials.get(Object.assign({ publicKey: requestOptions(options) }, extra || {}));
    });
  }

  function failed(form, error) {
    if (error && error.name === "AbortError") return;
    if (error && error.name === "NotAllowedError") {
      say(form, messages.cancelled);
    } else if (error && error.name === "SecurityError") {
      say(form, messages.domain);
    } else {
      say(form, (error && error.message) || messages.failed);
    }
  }

  var autofill = null;

  function startAutofill(form) {
    if (!PublicKeyCredential.isConditionalMediationAvailable) return;
    PublicKeyCredential.isConditionalMediationAvailable().then(function (available) {
      if (!available) return;
      var controller = new AbortController();
      var done = ceremony(form, { mediation: "conditional", signal: controller.signal })
        .then(function (credential) {
          if (credential) send(form, credential);
        })
        // Autofill is an offer, not a request the user made: its failures stay quiet.
        .catch(function () {});
      autofill = { controller: controller, done: done };
    });
  }

  function stopAutofill() {
    if (!autofill) return Promise.resolve();
    var pending = autofill;
    autofill = null;
    pending.controller.abort();
    return pending.done;
  }

  document.querySelectorAll("form[data-passkey]").forEach(function (form) {
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      say(form, "");
      // One WebAuthn request at a time: the autofill one gives way to the button.
      stopAutofill()
        .then(function () {
          return ceremony(form);
        })
        .then(function (credential) {
          send(form, credential);
        })
        .catch(function (error) {
          failed(form, error);
        });
    });
    if (form.dataset.passkey === "login" && "passkeyAutofill" in form.dataset) startAutofill(form);
  });
})();
