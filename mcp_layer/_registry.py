"""The tools, resources, prompts and completion handler a server offers."""

from __future__ import annotations

import inspect
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from ._call import call
from ._functions import FunctionSignature, docstring_summary
from ._results import UNSTRUCTURED_RETURN_TYPES
from .types import (
    Annotations,
    Icon,
    Prompt,
    PromptArgument,
    Resource,
    ResourceTemplate,
    Tool,
    ToolAnnotations,
    ToolExecution,
)

if TYPE_CHECKING:
    from ._context import Context
    from ._uri_template import UriTemplate

__all__ = ["PromptEntry", "ResourceEntry", "TemplateEntry", "ToolEntry", "call"]


@dataclass(slots=True)
class ToolEntry:
    """A tool: its description on the wire and the function behind it."""

    tool: Tool
    signature: FunctionSignature
    run_in_thread: bool = False
    task_support: Literal["optional", "required"] | None = None
    """Tasks extension (2026-07-28): whether a call may (or must) run as a task."""
    task_start: Literal["immediate", "explicit"] = "immediate"
    """When a call becomes a task: at once, or when the function calls `Context.start_task`."""
    handshake_tool: Tool | None = None
    """`tool` with ``execution.taskSupport``, as handshake-era clients see a task tool."""

    @classmethod
    def build(
        cls,
        func: Callable[..., Any],
        *,
        name: str | None,
        title: str | None,
        description: str | None,
        annotations: ToolAnnotations | None,
        input_schema: dict[str, Any] | None,
        output_schema: dict[str, Any] | None,
        structured_output: bool | None,
        icons: list[Icon] | None,
        meta: dict[str, Any] | None,
        run_in_thread: bool,
        task_support: Literal["optional", "required"] | None = None,
        task_start: Literal["immediate", "explicit"] = "immediate",
    ) -> ToolEntry:
        """Describe ``func`` as a tool (its schema built once, here)."""
        signature = FunctionSignature(
            func,
            context_type=loaded_context_type,
            input_schema=input_schema,
            structured_output=structured_output,
            output_schema=output_schema,
            unstructured_types=UNSTRUCTURED_RETURN_TYPES,
        )
        tool = Tool(
            name=name or func.__name__,
            title=title,
            description=description if description is not None else docstring_summary(func.__doc__),
            input_schema=signature.input_schema,
            output_schema=signature.output_schema,
            annotations=annotations,
            icons=icons,
            meta=meta,
        )
        # The model keeps a copy of each schema's top-level dict: share it, not two.
        signature.input_schema = tool.input_schema
        signature.output_schema = tool.output_schema
        handshake_tool = None
        if task_support is not None:  # 2025-11-25 tasks; the 2026 schema has no `execution`
            execution = ToolExecution(task_support=task_support)
            handshake_tool = tool.model_copy(update={"execution": execution})
        return cls(tool, signature, run_in_thread, task_support, task_start, handshake_tool)


@dataclass(slots=True)
class ResourceEntry:
    """A resource with a fixed URI."""

    resource: Resource
    func: Callable[..., Any]
    context_param: str | None


@dataclass(slots=True)
class TemplateEntry:
    """A family of resources described by an RFC 6570 URI template."""

    template: ResourceTemplate
    matcher: UriTemplate
    func: Callable[..., Any]
    context_param: str | None


@dataclass(slots=True)
class PromptEntry:
    """A prompt template and the function that renders it."""

    prompt: Prompt
    signature: FunctionSignature


def loaded_context_type() -> type[Context] | None:
    """`Context` if ``mcp_layer._context`` is loaded, else ``None``: no annotation can
    be `Context` (or a subclass) before that, so nothing needs to load it to look."""
    module = sys.modules.get(f"{__package__}._context")
    return None if module is None else module.Context


def context_parameter(func: Callable[..., Any]) -> str | None:
    """The name of ``func``'s `Context` parameter, if it has one."""
    for name, param in inspect.signature(func).parameters.items():
        annotation = param.annotation
        if isinstance(annotation, str):
            if annotation.split(".")[-1] == "Context":
                return name
        elif inspect.isclass(annotation):
            context_type = loaded_context_type()
            if context_type is not None and issubclass(annotation, context_type):
                return name
    return None


def build_resource(
    func: Callable[..., Any],
    uri: str,
    *,
    name: str | None,
    title: str | None,
    description: str | None,
    mime_type: str | None,
    annotations: Annotations | None,
    icons: list[Icon] | None,
    meta: dict[str, Any] | None,
    size: int | None = None,
) -> ResourceEntry | TemplateEntry:
    """A static resource, or a template when ``uri`` has variables."""
    from ._uri_template import UriTemplate  # a server without resources never loads it

    matcher = UriTemplate(uri)
    resolved_name = name or getattr(func, "__name__", uri)
    resolved_description = (
        description if description is not None else docstring_summary(func.__doc__)
    )
    context_param = context_parameter(func)
    if matcher.is_template:
        template = ResourceTemplate(
            uri_template=uri,
            name=resolved_name,
            title=title,
            description=resolved_description,
            mime_type=mime_type,
            annotations=annotations,
            icons=icons,
            meta=meta,
        )
        return TemplateEntry(template, matcher, func, context_param)
    resource = Resource(
        uri=uri,
        name=resolved_name,
        title=title,
        description=resolved_description,
        mime_type=mime_type,
        annotations=annotations,
        icons=icons,
        meta=meta,
        size=size,
    )
    return ResourceEntry(resource, func, context_param)


def build_prompt(
    func: Callable[..., Any],
    *,
    name: str | None,
    title: str | None,
    description: str | None,
    icons: list[Icon] | None,
    meta: dict[str, Any] | None,
) -> PromptEntry:
    """Describe ``func`` as a prompt whose arguments are its parameters."""
    signature = FunctionSignature(func, context_type=loaded_context_type, structured_output=False)
    schema = signature.input_schema
    required = set(schema.get("required", []))
    arguments = [
        PromptArgument(name=arg, description=spec.get("description"), required=arg in required)
        for arg, spec in schema.get("properties", {}).items()
    ]
    prompt = Prompt(
        name=name or func.__name__,
        title=title,
        description=description if description is not None else docstring_summary(func.__doc__),
        arguments=arguments or None,
        icons=icons,
        meta=meta,
    )
    return PromptEntry(prompt, signature)


CompletionHandler = Callable[..., Awaitable[Any] | Any]
