"""Submitting a modal that holds file uploads (``discord.ui.FileUpload``, type 19).

:meth:`Standin.submit_modal` fills text inputs and selects; this adds the upload
fields as the Discord client sends them: a label (type 18) wrapping the upload,
whose ``values`` are attachment ids, with the attachments themselves in
``data.resolved.attachments`` (their URLs served by the stand-in on loopback)::

    log = ds.attachment("server.log", b"...")
    await submit_modal_with_files(ds, opened, {"text": "..."}, files={"log__file": [log]})

Required uploads left empty, too many files, and files over the interaction's
``attachment_size_limit`` are refused as the client would refuse them.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from .builders import mirror_modal
from .records import InteractionRecord

__all__ = ["submit_modal_with_files"]


def _upload_of(component: Mapping[str, Any]) -> Mapping[str, Any] | None:
    inner = component.get("component") if component.get("type") == 18 else None
    return inner if isinstance(inner, Mapping) and inner.get("type") == 19 else None


async def submit_modal_with_files(
    ds: Any,
    opened_by: InteractionRecord,
    values: Mapping[str, Any],
    *,
    files: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
    user_id: int | None = None,
    wait: bool = True,
) -> InteractionRecord:
    """Like ``ds.submit_modal``, with ``files`` mapping upload custom_ids to attachments."""
    modal = opened_by.modal
    if modal is None:
        raise LookupError(f"{opened_by!r} was not answered with a modal (callback type 9)")
    files = dict(files or {})
    plain = copy.deepcopy(modal)
    uploads: list[tuple[int, Mapping[str, Any], Mapping[str, Any]]] = []
    kept = []
    for index, component in enumerate(modal.get("components") or []):
        upload = _upload_of(component)
        if upload is None:
            kept.append(component)
        else:
            uploads.append((index, component, upload))
    plain["components"] = kept
    components = mirror_modal(plain, values) if kept else []
    resolved: dict[str, Any] = {}
    limit = ds.config.attachment_size_limit
    for index, label, upload in uploads:
        custom_id = upload["custom_id"]
        given = list(files.pop(custom_id, []))
        if not given and upload.get("required", True):
            raise ValueError(f"file upload {custom_id!r} is required; the client would not submit")
        if len(given) > int(upload.get("max_values") or 1):
            raise ValueError(f"file upload {custom_id!r} takes at most {upload.get('max_values')}")
        for attachment in given:
            if int(attachment["size"]) > limit:
                raise ValueError(f"{attachment['filename']} is over the upload limit {limit}")
            resolved[str(attachment["id"])] = dict(attachment)
        components.insert(
            index,
            {
                "type": 18,
                "id": label.get("id") or 900 + index,
                "component": {
                    "type": 19,
                    "id": upload.get("id") or 950 + index,
                    "custom_id": custom_id,
                    "values": [str(a["id"]) for a in given],
                },
            },
        )
    if files:
        raise ValueError(f"modal {modal.get('custom_id')!r} has no file upload(s) {sorted(files)}")
    data: dict[str, Any] = {"custom_id": modal["custom_id"], "components": components}
    if resolved:
        data["resolved"] = {"attachments": resolved}
    member = opened_by.payload["member"]
    payload = ds.interaction_payload(
        5,
        data,
        user_id=opened_by.user_id if user_id is None else user_id,
        role_ids=[int(r) for r in member["roles"]],
        channel_id=int(opened_by.payload["channel_id"]),
        message=opened_by.payload.get("message"),
    )
    return await ds.inject(payload, wait=wait)
