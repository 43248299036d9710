"""A `RedirectHandler` for web applications: the app sends the user's browser to the
authorization URL itself and hands the callback back from its own redirect route."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from urllib.parse import parse_qs, urlsplit

import anyio

from ._errors import AuthorizationResponseError
from ._redirect import AuthorizationResponse

__all__ = ["CallbackRedirectHandler"]


class CallbackRedirectHandler:
    """Pairs authorization requests with the callbacks that answer them, by ``state``.

    ``show`` receives each authorization URL: redirect the user's browser there (or
    show a link). The app's route at ``redirect_uri`` passes the URL it was called with
    to `deliver`; the authorization waiting on that ``state`` then goes on. Waits at
    most ``timeout`` seconds for the user::

        handler = CallbackRedirectHandler("https://app.example.com/oauth/callback", show)
        auth = OAuthAuth(handler)            # its redirect_uri is the handler's
        ...
        async def oauth_callback(request):   # the app's route
            handler.deliver(str(request.url))
    """

    def __init__(
        self,
        redirect_uri: str,
        show: Callable[[str], Awaitable[None]],
        *,
        timeout: float = 600.0,
    ) -> None:
        self.redirect_uri = redirect_uri
        self.show = show
        self.timeout = timeout
        self._waiting: dict[str, tuple[anyio.Event, list[str]]] = {}

    async def __call__(self, authorization_url: str) -> str:
        states = parse_qs(urlsplit(authorization_url).query).get("state") or [""]
        state = states[0]
        event = anyio.Event()
        box: list[str] = []
        self._waiting[state] = (event, box)
        try:
            await self.show(authorization_url)
            with anyio.move_on_after(self.timeout):
                await event.wait()
        finally:
            self._waiting.pop(state, None)
        if not box:
            raise AuthorizationResponseError(
                f"no authorization response arrived in {self.timeout:g} s"
            )
        return box[0]

    def deliver(self, callback_url: str) -> bool:
        """Hand over the URL the redirect route was called with; ``False`` when no
        authorization waits for its ``state`` (stale, replayed or forged)."""
        state = AuthorizationResponse.from_url(callback_url).state
        waiting = self._waiting.get(state or "")
        if waiting is None or waiting[1]:
            return False
        event, box = waiting
        box.append(callback_url)
        event.set()
        return True

    @property
    def pending(self) -> int:
        """How many authorizations wait for their callback."""
        return len(self._waiting)
