"""qmgr operations on hook and pbshook objects: create, delete, list, print, set, unset,
import and export (OpenPBS mgr_hook_* in src/server/hook_func.c).

``qmgr_hook(ctx, message, command, objtype)`` runs under ``ctx.lock``; ``objtype`` is
``hook`` (site hooks) or ``pbshook`` (built-in hooks). Errors are hook errors
(:func:`mockpbs.server.errors.hook_error`), with the texts of real OpenPBS.
"""
import base64
import binascii

from mockpbs import pbslog
from mockpbs.server import hooks, models, qmgr_attrs
from mockpbs.server.errors import PBSE_HOOKERROR, PBSE_IVALREQ, PbsError, hook_error

HOOK_PREFIX_MESSAGE = "hook_name '%s', cannot use PBS as a prefix it is reserved for pbs hooks"
HOOK_FILE_TYPES = ("HK", "PY", "CF")


def qmgr_hook(ctx, message, command, objtype):
    """The reply to qmgr ``command`` on hook ``message["name"]`` of ``objtype``."""
    name = message.get("name")
    if command == "create":
        return _create(ctx, message, name, objtype)
    if command == "delete":
        return _delete(ctx, message, name, objtype)
    if command in ("list", "print"):
        return _list(ctx, message, command, name, objtype)
    hook = hooks.find_hook(ctx, name, objtype)
    if command in ("set", "unset"):
        return _set(ctx, message, command, hook, objtype)
    if command in ("import", "export"):
        return _import_export(ctx, message, command, hook, objtype)
    raise PbsError(PBSE_IVALREQ)


def _create(ctx, message, name, objtype):
    state = ctx.state
    if objtype == "pbshook":
        raise PbsError(PBSE_IVALREQ)
    if name.startswith("PBS"):
        raise hook_error(HOOK_PREFIX_MESSAGE % name)
    if name in state.hooks:
        raise hook_error("hook name '%s' already registered, try another name" % name)
    hook = models.Hook(name)
    for attr, op, value in message["attrs"]:
        hooks.set_hook_attr(hook, attr, op, value)
    state.hooks[name] = hook
    state.pending_delete.discard(name)
    state.save_hook(hook)
    ctx.log.hook(pbslog.PBSEVENT_ADMIN, name, "created at request of %s" % ctx.requestor(message))
    hooks.push_hook(ctx, name)
    return {}


def _delete(ctx, message, name, objtype):
    state = ctx.state
    if objtype == "pbshook":
        raise PbsError(PBSE_IVALREQ)
    hook = hooks.find_hook(ctx, name, objtype)
    if hook.type != "site":
        raise hook_error("%s not of 'site' type" % name)
    del state.hooks[name]
    state.pending_delete.add(name)
    for ext in HOOK_FILE_TYPES:
        state.remove_hook_file(name, ext)
    ctx.log.hook(pbslog.PBSEVENT_ADMIN, name, "deleted at request of %s" % ctx.requestor(message))
    hooks.push_hook_delete(ctx, name)
    return {}


def _list(ctx, message, command, name, objtype):
    """``list``/``print``: the hooks of ``objtype`` (or hook ``name``) with the requested
    attributes; ``print`` adds each hook's body and config (base64)."""
    state = ctx.state
    want_type = "pbs" if objtype == "pbshook" else "site"
    if name:
        hook = state.hooks.get(name)
        if hook is None:
            raise PbsError(PBSE_HOOKERROR, "hook not found", hook_error=True)
        listed = [hook] if hook.type == want_type else []
        if not listed:
            return {"objects": [], "empty_rc": 1}
    else:
        listed = [h for h in state.hooks.values() if h.type == want_type]
    if command == "print" and objtype == "pbshook":
        return {"objects": [], "empty_rc": 1}
    requested = qmgr_attrs.requested(message)
    objects = []
    for hook in listed:
        entry = {"label": "Hook", "name": hook.name, "items": qmgr_attrs.filter_items(hook.listing(), requested)}
        if command == "print":
            for ext in ("PY", "CF"):
                text = state.read_hook_file(hook.name, ext)
                entry[ext + "_b64"] = base64.b64encode(text.encode()).decode() if text else ""
        objects.append(entry)
    return {"objects": objects}


def _set(ctx, message, command, hook, objtype):
    """``set``/``unset`` attributes of ``hook``: reply ``{"stderr": [warning, ...]}``."""
    name = hook.name
    if objtype == "hook" and hook.type == "pbs":
        raise hook_error("cannot set attributes of a 'pbs' hook")
    if objtype == "pbshook" and hook.type != "pbs":
        raise hook_error("%s not of 'pbs' type" % name)
    warnings = []
    for attr, op, value in message["attrs"]:
        if command == "set":
            hooks.set_hook_attr(hook, attr, op, value)
            if hook.type == "pbs" and attr == "enabled" and hook.attrs["enabled"] == "false":
                warnings.append("WARNING: Disabling a PBS hook results in an unsupported configuration!")
        else:
            hooks.unset_hook_attr(hook, attr)
    hook.pristine_hk = None
    ctx.state.save_hook(hook)
    ctx.log.hook(pbslog.PBSEVENT_ADMIN, name, "mgr_hook_set at request of %s" % ctx.requestor(message))
    hooks.push_hook(ctx, name, only=("HK",))
    return {"stderr": warnings}


def _import_export(ctx, message, command, hook, objtype):
    """``import``: a new body (PY) or config (CF) from ``content_b64``, a body only if it
    compiles; reply ``{"stderr": [...]}``. ``export``: ``{"content_b64": text}``."""
    state = ctx.state
    name = hook.name
    content_type = message.get("content_type")
    encoding = message.get("encoding")
    if objtype == "hook" and hook.type != "site":
        raise hook_error("%s not of 'site' type" % name)
    if command == "import":
        # OpenPBS mgr_hook_import logs the request before it checks its parameters
        ctx.log.hook(pbslog.PBSEVENT_ADMIN, name, "mgr_hook_import at request of %s" % ctx.requestor(message))
    if objtype == "pbshook" and content_type != "application/x-config":
        raise hook_error("<content-type> must be application/x-config")
    if content_type not in ("application/x-python", "application/x-config"):
        raise hook_error("<content-type> must be application/x-python or application/x-config")
    if encoding not in ("default", "base64"):
        raise hook_error("<content-encoding> must be default or base64")
    ext = "PY" if content_type == "application/x-python" else "CF"
    if command == "export":
        text = state.read_hook_file(name, ext) or ""
        return {"content_b64": base64.b64encode(text.encode()).decode()}
    raw = base64.b64decode(message.get("content_b64") or "")
    existed = state.read_hook_file(name, ext) is not None
    if encoding == "base64":
        try:
            raw = base64.b64decode(raw)
        except (binascii.Error, ValueError) as exc:
            if ext == "CF":
                state.remove_hook_file(name, ext)
            raise hook_error(str(exc))
    if ext == "PY" and not hooks.compiles(raw):
        text = ("Failed to compile script, hook '%s' contents not overwritten" % name
                if existed else "Failed to compile script")
        ctx.log.hook(pbslog.PBSEVENT_DEBUG, "mgr_hook_import", text)
        raise hook_error(text)
    state.write_hook_file(name, ext, raw.decode(errors="replace"))
    hooks.push_hook(ctx, name, only=("HK", ext))
    return {"stderr": ["hook '%s' contents overwritten" % name] if existed else []}
