// The API-token page's buttons: a static file, as the pages' CSP allows no inline script.
(() => {
  const csrf = document.querySelector('meta[name="csrf-token"]').content;
  let token = null;
  const show = async (response) => {
    document.getElementById("result").textContent =
      response.status + " " + response.statusText + "\n" + await response.text();
  };
  document.getElementById("issue").addEventListener("click", async () => {
    const response = await fetch("/token", {
      method: "POST", headers: {"X-CSRF-Token": csrf, "Accept": "application/json"},
    });
    const data = await response.json();
    if (data.code === "reauthentication_required") {
      // Issuing a token is an account change: prove a factor again, then come back.
      window.location = document.getElementById("issue").dataset.reauthenticateUrl + "?next=/account/token";
      return;
    }
    token = data.token;
    document.getElementById("token").textContent = token;
    document.getElementById("call").disabled = false;
  });
  const call = async (withToken) => {
    const headers = {"Accept": "application/json"};
    if (withToken) headers["Authorization"] = "Bearer " + token;
    await show(await fetch("/api/me", {headers, credentials: "omit"}));
  };
  document.getElementById("call").addEventListener("click", () => call(true));
  document.getElementById("call-without").addEventListener("click", () => call(false));
})();
