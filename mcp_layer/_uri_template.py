"""RFC 6570 URI templates: expansion and matching, for resource templates.

Supported expressions (what MCP servers use): ``{var}`` (simple; no ``/``, ``?``,
``#`` or ``,`` inside a value), ``{+var}`` (reserved; may span ``/``), ``{#var}``,
``{/var}`` and ``{/var*}`` (path segments), ``{.var}``, ``{?a,b}`` and ``{&a}``
(query). Matching is the inverse of expansion: it never lets a simple variable cross a
``/``, so ``file:///{name}`` cannot be matched by ``file:///../etc/passwd``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import parse_qsl, quote, unquote

__all__ = ["UriTemplate"]

_EXPRESSION = re.compile(r"\{([+#./;?&]?)([^}]*)\}")
_VARNAME = re.compile(r"^[A-Za-z0-9_.%]+(\*|:\d+)?$")


@dataclass(frozen=True, slots=True)
class _Var:
    operator: str
    name: str
    explode: bool


class UriTemplate:
    """A compiled URI template."""

    def __init__(self, template: str) -> None:
        self.template = template
        self._parts: list[str | list[_Var]] = []
        self.variables: list[str] = []
        position = 0
        pattern = ["^"]
        self._query_vars: list[str] = []
        self._operators: dict[str, str] = {}
        for match in _EXPRESSION.finditer(template):
            literal = template[position : match.start()]
            self._parts.append(literal)
            pattern.append(re.escape(literal))
            operator, names = match.group(1), match.group(2)
            group: list[_Var] = []
            for raw in names.split(","):
                raw = raw.strip()
                if not _VARNAME.match(raw):
                    raise ValueError(f"invalid variable {raw!r} in URI template {template!r}")
                explode = raw.endswith("*")
                name = raw.rstrip("*").split(":", 1)[0]
                group.append(_Var(operator, name, explode))
                self.variables.append(name)
                self._operators[name] = operator
            self._parts.append(group)
            pattern.append(self._pattern_for(operator, group))
            position = match.end()
        literal = template[position:]
        self._parts.append(literal)
        pattern.append(re.escape(literal))
        pattern.append("$")
        self._regex = re.compile("".join(pattern))

    @property
    def is_template(self) -> bool:
        """Whether the template has any variable (else it is a plain URI)."""
        return bool(self.variables)

    def _pattern_for(self, operator: str, group: list[_Var]) -> str:
        if operator in ("?", "&"):
            self._query_vars.extend(v.name for v in group)
            return r"(?:[?&][^#]*)?"
        if len(group) != 1:
            separator = {"": ",", "+": ",", "#": ",", ".": r"\.", "/": "/"}.get(operator, ",")
            return separator.join(self._single(operator, v) for v in group)
        return self._single(operator, group[0])

    @staticmethod
    def _single(operator: str, var: _Var) -> str:
        name = re.sub(r"\W", "_", var.name)
        if operator == "":
            return rf"(?P<{name}>[^/?#,]*)"
        if operator == "+":
            return rf"(?P<{name}>[^?#]*)"
        if operator == "#":
            return rf"(?:#(?P<{name}>.*))?"
        if operator == ".":
            return rf"(?:\.(?P<{name}>[^/?#.]*))?"
        if operator == "/":
            if var.explode:
                return rf"(?P<{name}>(?:/[^/?#]*)*)"
            return rf"/(?P<{name}>[^/?#]*)"
        return rf"(?P<{name}>[^/?#]*)"

    def match(self, uri: str) -> dict[str, str] | None:
        """The variables if ``uri`` matches, else ``None`` (values percent-decoded)."""
        found = self._regex.match(uri)
        if found is None:
            return None
        values: dict[str, str] = {}
        for name in self.variables:
            if name in self._query_vars:
                continue
            group = found.groupdict().get(re.sub(r"\W", "_", name))
            if group is not None:
                value = unquote(group.lstrip("/")) if group.startswith("/") else unquote(group)
                if "/" in value and self._operators[name] not in ("+", "#", "/"):
                    # A percent-encoded slash must not smuggle a path into a simple value
                    # (file:///{name} with %2Fetc%2Fpasswd).
                    return None
                values[name] = value
        if self._query_vars:
            query = uri.split("?", 1)[1].split("#", 1)[0] if "?" in uri else ""
            for key, value in parse_qsl(query, keep_blank_values=True):
                if key in self._query_vars:
                    values[key] = value
        if any(".." in value.split("/") for value in values.values()):
            return None
        return values

    def expand(self, **values: str) -> str:
        """The URI for ``values`` (simple values percent-encoded)."""
        out: list[str] = []
        for part in self._parts:
            if isinstance(part, str):
                out.append(part)
                continue
            operator = part[0].operator
            present = [(v, values[v.name]) for v in part if v.name in values]
            if not present:
                continue
            safe = ":/?#[]@!$&'()*+,;=" if operator in ("+", "#") else ""
            encoded = [(v.name, quote(str(value), safe=safe)) for v, value in present]
            if operator in ("?", "&"):
                prefix = operator
                out.append(prefix + "&".join(f"{n}={val}" for n, val in encoded))
            elif operator == "/":
                out.append("".join(f"/{val}" for _, val in encoded))
            elif operator == ".":
                out.append("".join(f".{val}" for _, val in encoded))
            elif operator == "#":
                out.append("#" + ",".join(val for _, val in encoded))
            else:
                out.append(",".join(val for _, val in encoded))
        return "".join(out)
