// A single-page app on the suite's JSON API, `browser` client: plain JavaScript, no build
// step. It keeps no state of its own: every answer is the session's status, and the page
// shows it. Changes send the `csrf_token` cookie's value in `X-CSRF-Token` (login too:
// login CSRF); any GET of the API hands that cookie out.
(function () {
  "use strict";
  var API = "/api/auth/browser/v1/";
  var status = document.getElementById("spa-status");
  var views = {
    anonymous: document.getElementById("spa-login"),
    second_factor_required: document.getElementById("spa-second-factor"),
    authenticated: document.getElementById("spa-account"),
  };

  function cookie(name) {
    var found = document.cookie.split("; ").find(function (part) {
      return part.indexOf(name + "=") === 0;
    });
    return found ? decodeURIComponent(found.slice(name.length + 1)) : "";
  }

  function call(method, path, body) {
    var headers = { Accept: "application/json" };
    if (method !== "GET") {
      headers["Content-Type"] = "application/json";
      headers["X-CSRF-Token"] = cookie("csrf_token");
    }
    return fetch(API + path, {
      method: method,
      credentials: "same-origin",
      headers: headers,
      body: method === "GET" ? undefined : JSON.stringify(body || {}),
    }).then(function (response) {
      return response.json().then(function (data) {
        if (!response.ok) {
          // Every refusal is problem+json: its `detail` is written for people.
          var error = new Error(data.detail || response.statusText);
          error.code = data.code;
          throw error;
        }
        return data;
      });
    });
  }

  function say(text) {
    status.textContent = text;
  }

  function show(session) {
    Object.keys(views).forEach(function (name) {
      views[name].hidden = name !== session.status;
    });
    if (session.status === "authenticated") {
      var user = session.user;
      document.getElementById("spa-email").textContent = user.email;
      var factors = user.factors || {};
      document.getElementById("spa-factors").textContent =
        "TOTP " + (factors.totp ? "on" : "off") + ", passkeys " + (factors.passkeys ? "on" : "off");
      say("Signed in as " + user.email + ".");
    } else if (session.status === "second_factor_required") {
      say("Password accepted: enter the code from your authenticator app.");
      document.getElementById("spa-code").focus();
    } else {
      say("Not signed in.");
    }
    return session;
  }

  function failed(error) {
    say(error.message);
  }

  // -- passkeys: the options' binary fields travel as base64url ---------------------------
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

  function credentials(list) {
    return (list || []).map(function (item) {
      return Object.assign({}, item, { id: fromBase64url(item.id) });
    });
  }

  function answer(credential) {
    var response = credential.response;
    var json = {
      id: credential.id,
      rawId: toBase64url(credential.rawId),
      type: credential.type,
      clientExtensionResults: credential.getClientExtensionResults(),
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
    return json;
  }

  function passkeyLogin() {
    return call("POST", "auth/passkey/options", { kind: "login" })
      .then(function (data) {
        var options = data.publicKey;
        return navigator.credentials.get({
          publicKey: Object.assign({}, options, {
            challenge: fromBase64url(options.challenge),
            allowCredentials: credentials(options.allowCredentials),
          }),
        });
      })
      .then(function (credential) {
        return call("POST", "auth/passkey/login", { credential: answer(credential) });
      });
  }

  function addPasskey(name) {
    return call("POST", "auth/passkey/options", { kind: "register" })
      .then(function (data) {
        var options = data.publicKey;
        return navigator.credentials.create({
          publicKey: Object.assign({}, options, {
            challenge: fromBase64url(options.challenge),
            user: Object.assign({}, options.user, { id: fromBase64url(options.user.id) }),
            excludeCredentials: credentials(options.excludeCredentials),
          }),
        });
      })
      .then(function (credential) {
        return call("POST", "account/passkeys", { name: name, credential: answer(credential) });
      });
  }

  // -- the forms ------------------------------------------------------------------------------
  function on(id, handler) {
    document.getElementById(id).addEventListener("submit", function (event) {
      event.preventDefault();
      handler(event.target).catch(failed);
    });
  }

  on("spa-login-form", function (form) {
    return call("POST", "auth/login", {
      email: form.email.value,
      password: form.password.value,
    }).then(show);
  });
  on("spa-code-form", function (form) {
    return call("POST", "auth/second-factor", { code: form.code.value }).then(show);
  });
  on("spa-passkey-form", function () {
    return passkeyLogin().then(show);
  });
  on("spa-add-passkey-form", function (form) {
    return addPasskey(form.name.value).then(function (data) {
      say("Passkey “" + data.passkey.name + "” added.");
      return call("GET", "session").then(function (session) {
        show(session);
        say("Passkey “" + data.passkey.name + "” added.");
      });
    });
  });
  on("spa-logout-form", function () {
    return call("DELETE", "session").then(show);
  });

  call("GET", "session").then(show).catch(failed);
})();
