"""Session configuration options and ``session/set_config_option`` (session-config-options.mdx).

An agent offers a list of `SessionConfigOption` (a select, or a boolean toggle for clients
that advertise ``clientCapabilities.session.configOptions.boolean``), and replaces the whole
list whenever a value changes. Option kinds are a closed union: an unknown kind is an invalid
item, skipped from the lists that carry ``x-deserialize-skip-invalid-items``.
"""

from typing import TYPE_CHECKING, Literal, TypeAlias

from pydantic import model_validator
from typing_extensions import Self

from ._base import (
    ACPModel,
    SessionConfigGroupId,
    SessionConfigId,
    SessionConfigValueId,
    SessionId,
)
from ._lenient import ItemsOrEmpty, OrDefault, tagged_union

__all__ = [
    "SessionConfigBoolean",
    "SessionConfigOption",
    "SessionConfigOptionCategory",
    "SessionConfigSelect",
    "SessionConfigSelectGroup",
    "SessionConfigSelectOption",
    "SessionConfigSelectOptions",
    "SetSessionConfigOptionRequest",
    "SetSessionConfigOptionResponse",
]

SessionConfigOptionCategory: TypeAlias = str
"""Semantic category of an option, for UX only: ``"mode"``, ``"model"``, ``"model_config"``,
``"thought_level"``, or any other string (clients must tolerate unknown categories)."""


class SessionConfigSelectOption(ACPModel):
    """A possible value for a session configuration option."""

    value: SessionConfigValueId
    name: str
    description: OrDefault[str | None] = None


class SessionConfigSelectGroup(ACPModel):
    """A group of possible values for a session configuration option."""

    group: SessionConfigGroupId
    name: str
    options: ItemsOrEmpty[SessionConfigSelectOption]


SessionConfigSelectOptions: TypeAlias = (
    list[SessionConfigSelectOption] | list[SessionConfigSelectGroup]
)
"""Possible values for a select option: a flat list, or a list of groups."""


class _SessionConfigOptionFields(ACPModel):
    id: SessionConfigId
    name: str
    description: OrDefault[str | None] = None
    category: OrDefault[SessionConfigOptionCategory | None] = None


class SessionConfigSelect(_SessionConfigOptionFields):
    """A single-value selector (dropdown) session configuration option."""

    type: Literal["select"] = "select"
    current_value: SessionConfigValueId
    options: SessionConfigSelectOptions


class SessionConfigBoolean(_SessionConfigOptionFields):
    """A boolean on/off toggle session configuration option."""

    type: Literal["boolean"] = "boolean"
    current_value: bool


if TYPE_CHECKING:
    SessionConfigOption: TypeAlias = SessionConfigSelect | SessionConfigBoolean
else:
    SessionConfigOption = tagged_union("type", SessionConfigSelect, SessionConfigBoolean)
"""A session configuration option selector and its current state, told apart by ``type``."""


class SetSessionConfigOptionRequest(ACPModel):
    """Request parameters for setting a session configuration option.

    ``value`` is a value id (string) or, with ``type="boolean"``, a bool. A bool value
    given without ``type`` gets ``type="boolean"``; as the schema says, a string value with
    an absent or unknown ``type`` is a value id.
    """

    session_id: SessionId
    config_id: SessionConfigId
    value: bool | SessionConfigValueId
    type: str | None = None

    @model_validator(mode="after")
    def _check_value_type(self) -> Self:
        if self.type == "boolean" and not isinstance(self.value, bool):
            raise ValueError("type 'boolean' needs a boolean value")
        if isinstance(self.value, bool):
            if self.type is None:
                self.type = "boolean"
            elif self.type != "boolean":
                raise ValueError("a boolean value needs type 'boolean'")
        return self


class SetSessionConfigOptionResponse(ACPModel):
    """Response to ``session/set_config_option``: the full, current set of options."""

    config_options: ItemsOrEmpty[SessionConfigOption]
