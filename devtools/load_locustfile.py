"""Locust users of ``manage.py load_benchmark`` (run by it as ``locust -f`` this file; never
imported by the product).

The command writes a JSON file and names it in ``CLAIMSCOPE_LOAD_CONFIG``::

    {"log": PATH, "browser_users": 40, "api_users": 10, "think": [1.0, 2.0],
     "username": ..., "password": ..., "token": ...,
     "pages": {name: [path, ...]}, "api": {name: [path, ...]}}

``BrowserUser``: logs in through the login form once (a real session), then requests one of
``pages`` at a time (a uniformly chosen page, then one of its paths), waiting ``think`` seconds
(uniform) between requests. ``ApiUser``: no session, ``Authorization: Token KEY`` on each of
``api``. Redirects are not followed: a page that answers anything but 200 (a redirect to the
login page included) is an error.

Every request is appended to ``log`` as one tab-separated line, flushed at once:
``start (epoch seconds)  milliseconds (send to last byte)  name  status  error``; the command
reads the phases' figures from it. Locust's own statistics are not used (its percentiles are
rounded).
"""

from __future__ import annotations

import itertools
import json
import os
import random
import re
from urllib.parse import urlencode

from locust import FastHttpUser, between, events, task

_CONFIG = json.loads(open(os.environ["CLAIMSCOPE_LOAD_CONFIG"], encoding="utf-8").read())
_LOG = open(_CONFIG["log"], "a", encoding="utf-8", buffering=1)  # open for the whole run, line-buffered
_CSRF = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


@events.request.add_listener
def _record(request_type, name, response_time, response=None, exception=None, start_time=None, **_kw):
    status = getattr(response, "status_code", 0) or 0
    error = "" if exception is None else type(exception).__name__ + ": " + str(exception)[:200]
    error = error.replace("\t", " ").replace("\n", " ")
    _LOG.write(f"{start_time:.6f}\t{response_time:.3f}\t{name}\t{status}\t{error}\n")


@events.quitting.add_listener
def _close(**_kw):
    _LOG.flush()


def _get(user: FastHttpUser, name: str, path: str, headers: dict[str, str] | None = None) -> None:
    with user.client.get(path, name=name, headers=headers, allow_redirects=False, catch_response=True) as resp:
        if resp.status_code != 200:
            resp.failure(f"HTTP {resp.status_code} {resp.headers.get('Location', '') if resp.headers else ''}".strip())
        else:
            resp.success()


# The users of this process take the pages (and the API endpoints) in turn, not at random: a
# short run still asks for every one of them.
_turns = {"pages": itertools.count(), "api": itertools.count()}


def _next(kind: str) -> str:
    names = sorted(_CONFIG[kind])
    return names[next(_turns[kind]) % len(names)]


class BrowserUser(FastHttpUser):
    fixed_count = int(_CONFIG["browser_users"])
    wait_time = between(*_CONFIG["think"])

    def on_start(self) -> None:
        page = self.client.get("/login/", name="login_form")
        m = _CSRF.search(page.text or "")
        form = {"username": _CONFIG["username"], "password": _CONFIG["password"],
                "csrfmiddlewaretoken": m.group(1) if m else ""}
        with self.client.post("/login/", data=urlencode(form), name="login", allow_redirects=False, catch_response=True,
                              headers={"Content-Type": "application/x-www-form-urlencoded"}) as resp:
            if resp.status_code != 302:
                resp.failure(f"login answered HTTP {resp.status_code}")

    @task
    def page(self) -> None:
        name = _next("pages")
        _get(self, name, random.choice(_CONFIG["pages"][name]))  # noqa: S311 - load pattern, not security


class ApiUser(FastHttpUser):
    fixed_count = int(_CONFIG["api_users"])
    wait_time = between(*_CONFIG["think"])

    @task
    def api(self) -> None:
        name = _next("api")
        _get(self, name, random.choice(_CONFIG["api"][name]), {"Authorization": f"Token {_CONFIG['token']}"})  # noqa: S311
