# SPDX-License-Identifier: Apache-2.0
"""Routing vLLM's per-step attention metadata through attnmeta.

:func:`patch_vllm` replaces, in the running process only, two of vLLM's
metadata computations by one attnmeta launch each:

``token_to_req_indices``
    ``CommonAttentionMetadata.token_to_req_indices(buffer)`` (module
    ``vllm.v1.attention.backend``, earlier ``vllm.v1.attention.backends.utils``):
    the request of each token, a ``repeat_interleave`` over the device
    ``query_start_loc`` plus a copy and a fill, becomes
    :func:`attnmeta.compute_token_to_req_indices` into the same buffer, with
    the same per-instance cache (``_token_to_req_indices_cache``) and the
    same result: the map for the ``query_start_loc_cpu[-1]`` real tokens,
    zeros up to ``num_actual_tokens``.

``indexer_decode``
    ``DeepseekV32IndexerMetadataBuilder._prepare_decode_tensors`` (module
    ``vllm.v1.attention.backends.mla.indexer``), the sparse indexer's
    flattened decode metadata (one row per token, ``use_native`` false): the
    per-token causal lengths, block-table rows and decode lengths become one
    :class:`attnmeta.StepPlan` launch into the builder's own persistent
    buffers (``decode_seq_lens_buffer``, ``expanded_block_table_buffer``,
    ``decode_lens_buffer``), so CUDA graphs see the same addresses. The
    native (2-D) path is left to vLLM. DCP localisation and compression
    still happen afterwards in vLLM, on the global lengths, as before.

Nothing changes unless :func:`patch_vllm` is called; the handle it returns
puts vLLM's own functions back (``restore()``, or leave a ``with`` block).
Each target is checked before it is replaced: the vLLM version
(:data:`MIN_VLLM_VERSION` or newer) and the parameters of the function, so a
vLLM whose code moved on is left alone and the handle says why
(``handle.skipped``).

Usage, before the engine builds its first step::

    from attnmeta.integrations.vllm import patch_vllm
    handle = patch_vllm()          # or patch_vllm(indexer_decode=False)
    print(handle)                  # what was routed, and what was not and why
    ...
    handle.restore()
"""

import functools
import importlib
import inspect
import re
import threading
from typing import Any, Callable, Dict, List, Optional, Tuple

__all__ = ["MIN_VLLM_VERSION", "VllmPatch", "patch_vllm", "active_patch"]

MIN_VLLM_VERSION = (0, 11, 0)

_COMMON_MODULES = ("vllm.v1.attention.backend", "vllm.v1.attention.backends.utils")
_INDEXER_MODULE = "vllm.v1.attention.backends.mla.indexer"
_PREPARE_PARAMS = ("seq_lens", "block_table", "decode_lens", "decode_lens_cpu", "query_start_loc",
                   "num_decodes", "num_decode_tokens", "use_native", "next_n", "max_decode_len")
_MARK = "__attnmeta_original__"

_lock = threading.Lock()
_active = None  # the VllmPatch in force, if any


def _version_tuple(text: str) -> Tuple[int, ...]:
    """(major, minor, patch) of a version string; dev/rc suffixes ignored."""
    numbers = re.findall(r"\d+", text.split("+")[0])[:3]
    return tuple(int(n) for n in numbers) + (0,) * (3 - len(numbers))


class VllmPatch:
    """What :func:`patch_vllm` did: ``applied`` (names of the routed
    targets), ``skipped`` (name -> why not), ``vllm_version``. ``restore()``
    (or the end of a ``with`` block) puts vLLM's functions back."""

    def __init__(self, vllm_version: str) -> None:
        self.vllm_version = vllm_version
        self.applied = []  # type: List[str]
        self.skipped = {}  # type: Dict[str, str]
        self._undo = []  # type: List[Tuple[Any, str, Any]]

    @property
    def active(self) -> bool:
        return bool(self._undo)

    def _replace(self, owner: Any, name: str, new: Callable[..., Any], label: Optional[str]) -> None:
        original = owner.__dict__[name]
        setattr(new, _MARK, original)
        self._undo.append((owner, name, original))
        setattr(owner, name, new)
        if label:
            self.applied.append(label)

    def restore(self) -> None:
        """vLLM's own functions back; safe to call twice."""
        global _active
        with _lock:
            while self._undo:
                owner, name, original = self._undo.pop()
                setattr(owner, name, original)
            if _active is self:
                _active = None

    def __enter__(self) -> "VllmPatch":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.restore()

    def __repr__(self) -> str:
        parts = ["vLLM %s" % self.vllm_version,
                 "routed through attnmeta: %s" % (", ".join(self.applied) or "nothing")]
        parts += ["%s not routed: %s" % item for item in sorted(self.skipped.items())]
        return "<attnmeta.integrations.vllm.VllmPatch %s>" % "; ".join(parts)


def active_patch() -> Optional[VllmPatch]:
    """The patch in force, or None."""
    return _active


def patch_vllm(*, token_to_req_indices: bool = True, indexer_decode: bool = True,
               check_version: bool = True) -> VllmPatch:
    """Routes vLLM's token -> request map and the sparse indexer's decode
    metadata through attnmeta (see the module's documentation). Returns the
    handle; raises ImportError when vLLM is not importable. Calling it again
    while a patch is in force returns that patch. ``check_version=False``
    skips the version floor (not the parameter checks), for development
    builds of vLLM whose version string says nothing."""
    global _active
    vllm = importlib.import_module("vllm")
    version = str(getattr(vllm, "__version__", "unknown"))
    with _lock:
        if _active is not None:
            return _active
        patch = VllmPatch(version)
        if check_version and (version == "unknown" or _version_tuple(version) < MIN_VLLM_VERSION):
            reason = "vLLM %s is older than %s" % (version, ".".join(map(str, MIN_VLLM_VERSION)))
            for name, wanted in (("token_to_req_indices", token_to_req_indices),
                                 ("indexer_decode", indexer_decode)):
                if wanted:
                    patch.skipped[name] = reason
            return patch
        if token_to_req_indices:
            _patch_token_map(patch)
        if indexer_decode:
            _patch_indexer(patch)
        if patch.active:
            _active = patch
        return patch


# ---------------------------------------------------------------------------
# CommonAttentionMetadata.token_to_req_indices


def _find_common_metadata() -> Any:
    for name in _COMMON_MODULES:
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        cls = getattr(module, "CommonAttentionMetadata", None)
        if cls is not None:
            return cls
    return None


def _patch_token_map(patch: VllmPatch) -> None:
    label = "token_to_req_indices"
    cls = _find_common_metadata()
    if cls is None:
        patch.skipped[label] = "no CommonAttentionMetadata in %s" % " or ".join(_COMMON_MODULES)
        return
    original = cls.__dict__.get("token_to_req_indices")
    if not callable(original):
        patch.skipped[label] = "CommonAttentionMetadata has no token_to_req_indices method"
        return
    params = list(inspect.signature(original).parameters)
    if params != ["self", "buffer"]:
        patch.skipped[label] = "token_to_req_indices%s is not (self, buffer)" % inspect.signature(original)
        return
    from .. import compute_token_to_req_indices

    @functools.wraps(original)
    def token_to_req_indices(self: Any, buffer: Any) -> Any:
        num_tokens = self.num_actual_tokens
        cache = getattr(self, "_token_to_req_indices_cache", None)
        if cache is not None:
            return cache[:num_tokens]
        # The real token count from the host copy, as vLLM takes it; the
        # per-request split is read from the device boundaries.
        num_mapped = int(self.query_start_loc_cpu[-1])
        total = max(num_mapped, num_tokens)
        if buffer.shape[0] < total:
            raise ValueError("token_to_req_indices: buffer holds %d entries, %d needed"
                             % (buffer.shape[0], total))
        compute_token_to_req_indices(self.query_start_loc, buffer, num_mapped, total)
        self._token_to_req_indices_cache = buffer[:total]
        return self._token_to_req_indices_cache[:num_tokens]

    patch._replace(cls, "token_to_req_indices", token_to_req_indices, label)


# ---------------------------------------------------------------------------
# DeepseekV32IndexerMetadataBuilder: flattened decode metadata

_building = threading.local()


def _patch_indexer(patch: VllmPatch) -> None:
    label = "indexer_decode"
    try:
        module = importlib.import_module(_INDEXER_MODULE)
    except ImportError as exc:
        patch.skipped[label] = "cannot import %s: %s" % (_INDEXER_MODULE, exc)
        return
    cls = getattr(module, "DeepseekV32IndexerMetadataBuilder", None)
    if cls is None:
        patch.skipped[label] = "%s has no DeepseekV32IndexerMetadataBuilder" % _INDEXER_MODULE
        return
    prepare = cls.__dict__.get("_prepare_decode_tensors")
    build = cls.__dict__.get("build")
    if not callable(prepare) or not callable(build):
        patch.skipped[label] = "DeepseekV32IndexerMetadataBuilder has no _prepare_decode_tensors/build"
        return
    have = tuple(inspect.signature(prepare).parameters)[1:]
    if have != _PREPARE_PARAMS:
        patch.skipped[label] = "_prepare_decode_tensors takes (%s), not (%s)" % (
            ", ".join(have), ", ".join(_PREPARE_PARAMS))
        return
    build_params = tuple(inspect.signature(build).parameters)[1:3]
    if build_params != ("common_prefix_len", "common_attn_metadata"):
        patch.skipped[label] = "build takes (%s, ...), not (common_prefix_len, common_attn_metadata, ...)" % (
            ", ".join(build_params))
        return
    from .._step import build_step

    @functools.wraps(build)
    def patched_build(self: Any, common_prefix_len: Any, common_attn_metadata: Any, *args: Any,
                      **kwargs: Any) -> Any:
        # _prepare_decode_tensors receives query_start_loc[:num_decodes];
        # attnmeta needs the boundary after the last decode request too.
        previous = getattr(_building, "common", None)
        _building.common = common_attn_metadata
        try:
            return build(self, common_prefix_len, common_attn_metadata, *args, **kwargs)
        finally:
            _building.common = previous

    @functools.wraps(prepare)
    def patched_prepare(self: Any, seq_lens: Any, block_table: Any, decode_lens: Any,
                        decode_lens_cpu: Any, query_start_loc: Any, num_decodes: int,
                        num_decode_tokens: int, use_native: bool, next_n: int,
                        max_decode_len: int) -> Any:
        common = getattr(_building, "common", None)
        if use_native or common is None:
            return prepare(self, seq_lens, block_table, decode_lens, decode_lens_cpu,
                           query_start_loc, num_decodes, num_decode_tokens, use_native, next_n,
                           max_decode_len)
        seq_out = self.decode_seq_lens_buffer
        table_out = self.expanded_block_table_buffer
        decode_lens_out = self.decode_lens_buffer
        # One launch: per-token causal lengths (zeros from the real token
        # count to the end of the buffer), the request's block-table row
        # (zero rows for padding tokens), decode length 1.
        build_step(common.query_start_loc[: num_decodes + 1], num_decode_tokens,
                   num_reqs=num_decodes, seq_lens=seq_lens, block_table=block_table,
                   seq_lens_out=seq_out, block_table_out=table_out,
                   decode_lens_out=decode_lens_out, capacity=seq_out.shape[0])
        return (seq_out[:num_decode_tokens], table_out[:num_decode_tokens],
                decode_lens_out[:num_decode_tokens], num_decode_tokens, False)

    patch._replace(cls, "build", patched_build, None)
    patch._replace(cls, "_prepare_decode_tensors", patched_prepare, label)
