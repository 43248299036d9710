"""`Part`: one piece of content, told by which member is present (no ``kind``)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import SerializerFunctionWrapHandler, model_serializer, model_validator
from typing_extensions import Self

from ._base import A2AModel, Base64Bytes, JsonValue, Struct

__all__ = ["Part", "PartKind"]

PartKind = Literal["text", "raw", "url", "data"]


class Part(A2AModel):
    """A container for a section of communication content: text, a file, or data.

    Exactly one of ``text``, ``raw``, ``url`` and ``data`` is set. ``data`` may be any
    JSON value, including ``null``: a part built as ``Part(data=None)`` (or read from
    ``{"data": null}``) carries JSON null, which is why presence of ``data`` is taken
    from ``model_fields_set``. A ``"data": null`` next to another member is read as
    absent (ProtoJSON: null means unset), so dumps without ``exclude_none`` read back.
    """

    text: str | None = None
    raw: Base64Bytes | None = None
    url: str | None = None
    data: JsonValue = None
    metadata: Struct | None = None
    filename: str | None = None
    media_type: str | None = None

    @property
    def kind(self) -> PartKind:
        """Which content member is set: ``"text"``, ``"raw"``, ``"url"`` or ``"data"``."""
        if self.text is not None:
            return "text"
        if self.raw is not None:
            return "raw"
        if self.url is not None:
            return "url"
        return "data"

    def _content_members(self) -> list[str]:
        present = [n for n in ("text", "raw", "url") if getattr(self, n) is not None]
        if self.data is not None or (not present and "data" in self.model_fields_set):
            present.append("data")
        return present

    @model_validator(mode="after")
    def _exactly_one_content(self) -> Self:
        if self.data is None and "data" not in self.model_fields_set:
            # The usual case, decided without building the list of members.
            if (self.text is not None) + (self.raw is not None) + (self.url is not None) == 1:
                return self
        present = self._content_members()
        if len(present) != 1:
            found = ", ".join(present) if present else "none"
            raise ValueError(f"Part must have exactly one of text, raw, url, data (found {found})")
        return self

    @model_serializer(mode="wrap")
    def _data_null_only_as_content(self, handler: SerializerFunctionWrapHandler) -> Any:
        out = handler(self)
        if isinstance(out, dict) and self.data is None:
            if "data" in self.model_fields_set and self._content_members() == ["data"]:
                out["data"] = None  # JSON null is the content: keep it despite exclude_none
            else:
                out.pop("data", None)  # not the content: never write a competing null
        return out
