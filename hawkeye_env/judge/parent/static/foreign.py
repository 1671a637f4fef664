"""Attribute names that objects a candidate holds, other than its own, carry: Triton kernels (JIT,
autotuned, heuristics, Gluon), ``triton.Config``, ``constexpr``, tensors, parameters, ``nn.Module``,
dtypes, devices, sizes, generators, ``finfo``, functions, methods, ``functools.partial``, types,
the builtin containers, numbers, strings and exceptions, and inside a kernel on the CPU interpreter
its ``tl.tensor``s, their ``TensorHandle``s (``handle``), the numpy arrays, dtypes and scalars behind
those and Triton's types. Data only.

The static rules let a name that the candidate's class bodies define be read on its own objects;
the checker has no types, so a class-body name that one of these objects also carries (``fn``,
``cache``, ``get_capture_scope`` on a kernel; ``apply`` on a module) is readable on ``self`` alone
(``static_checker.py``). Names of ``OBJECT_ATTRIBUTES`` are left out (allowed on any object anyway),
and so are dunders (their own rule). ``tests/judge/test_static_allowlist.py`` recomputes the list
from the installed Triton and torch and fails when a name is missing, so an upgrade that adds one
is caught.
"""

from __future__ import annotations

FOREIGN_ATTRIBUTES: frozenset[str] = frozenset(
    """
    FP_TYPES H KIND OTHER_TYPES SIGNEDNESS SINT_TYPES STANDARD_FP_TYPES T_destination UINT_TYPES
    abbr abs_ absolute absolute_ acos acos_ acosh acosh_ add_module add_note add_pre_run_hook addbmm
    addbmm_ addcdiv addcdiv_ addcmul addcmul_ addmm addmm_ addmv addmv_ addr addr_ address_space
    adjoint advance alignment all all_kwargs allclose aminmax angle any apply apply_ arccos arccos_
    arccosh arccosh_ arcsin arcsin_ arcsinh arcsinh_ arctan arctan2 arctan2_ arctan_ arctanh
    arctanh_ arg_names argmax argmin argpartition argsort argwhere as_integer_ratio as_strided
    as_strided_ as_strided_scatter as_subclass asin asin_ asinh asinh_ associative_scan astype atan
    atan2 atan2_ atan_ atanh atanh_ atomic_add atomic_and atomic_cas atomic_load atomic_max
    atomic_min atomic_or atomic_poll atomic_store atomic_xchg atomic_xor attr backward baddbmm
    baddbmm_ base_fn bernoulli bernoulli_ bincount bit_count bits bitwise_and bitwise_and_
    bitwise_left_shift bitwise_left_shift_ bitwise_not bitwise_not_ bitwise_or bitwise_or_
    bitwise_right_shift bitwise_right_shift_ bitwise_xor bitwise_xor_ bmm buffers byte byteorder
    byteswap cache cache_key cache_key_part cache_results call_super_init capitalize casefold
    cauchy_ ccol_indices cdiv cdouble ceil ceil_ center cfloat chalf char check_disk_cache children
    cholesky cholesky_inverse cholesky_solve choose clamp clamp_ clamp_max clamp_max_ clamp_min
    clamp_min_ clear clip clip_ clone_state coalesce codegen_name col_indices compare compile
    compress configs configs_top_k conj conj_physical conj_physical_ conjugate const const_data_ptr
    constexprs copy copy_with copysign copysign_ corrcoef cos cos_ cosh cosh_ count_nonzero cov cpu
    create_binder cross crow_indices ctypes cuda cummax cummin cumprod cumprod_ cumsum cumsum_
    data_ptr debug decode def_file_col_number def_file_line_number default default_factory deg2rad
    deg2rad_ denominator dense_dim dequantize descr det detach_ device_caches diag diag_embed
    diagflat diagonal diagonal_scatter diff difference difference_update digamma digamma_ dim_order
    discard dist div_ divide divide_ do_bench do_not_specialize do_not_specialize_on_alignment dot
    dsplit dump dump_patches dumps early_config_prune eig encode eq eq_ equal erf erf_ erfc erfc_
    erfinv erfinv_ eval exp2 exp2_ exp_ expandtabs expm1 expm1_ exponent_bias exponential_
    extra_repr fields file_name fill fill_diagonal_ find fix fix_ flags flat flip fliplr flipud
    float_power float_power_ floor floor_ floor_divide floor_divide_ fmax fmin fmod fmod_ fn format
    format_map fp_mantissa_width frac frac_ frexp from_bytes fromhex fromkeys func gather gcd gcd_
    ge ge_ geometric_ geqrf ger get_block_shapes get_buffer get_capture_scope get_device
    get_element_ty get_extra_state get_int_max_value get_int_min_value get_offset get_parameter
    get_state get_submodule getfield grad grad_dtype grad_fn graphsafe_get_state graphsafe_set_state
    greater greater_ greater_equal greater_equal_ gt gt_ handle hardshrink hash hash_tensor
    hasobject heaviside heaviside_ hex histc histogram hsplit hypot hypot_ i0 i0_ igamma igamma_
    igammac igammac_ imag in_features index_add index_add_ index_copy index_copy_ index_fill
    index_fill_ index_put index_put_ index_reduce index_reduce_ index_select indices init
    initial_seed inner int_repr intersection intersection_update inverse ipu ir_override is_bf16
    is_block is_bool is_coalesced is_complex is_conj is_const is_cpu is_distributed is_dtype
    is_floating is_fp16 is_fp32 is_fp64 is_fp8 is_fp8e4b15 is_fp8e4b8 is_fp8e4nv is_fp8e5
    is_fp8e5b16 is_gluon is_inference is_int is_int1 is_int16 is_int32 is_int64 is_int8
    is_int_signed is_int_unsigned is_integer is_ipu is_leaf is_maia is_meta is_mkldnn is_mps is_mtia
    is_neg is_nested is_nonzero is_pinned is_ptr is_quantized is_same_size is_set_to is_shared
    is_signed is_sparse is_sparse_csr is_standard_floating is_uint16 is_uint32 is_uint64 is_uint8
    is_void is_vulkan is_xla is_xpu isalignedstruct isalnum isalpha isascii isbuiltin isclose
    isdecimal isdigit isdisjoint isfinite isidentifier isinf islower isnan isnative isneginf
    isnumeric isposinf isprintable isreal isspace issubset issuperset istft istitle isupper item
    kernel keywords kind kron kthvalue kw_only launch_metadata lcm lcm_ ldexp ldexp_ le le_ lerp
    lerp_ less less_ less_equal less_equal_ lgamma lgamma_ ljust load_state_dict log10 log10_ log1p
    log1p_ log2 log2_ log_ log_normal_ log_softmax logaddexp logaddexp2 logcumsumexp logdet
    logical_and logical_and_ logical_not logical_not_ logical_or logical_or_ logical_xor
    logical_xor_ logit logit_ logsumexp lstrip lstsq lt lt_ lu lu_solve mH maketrans mangle
    manual_seed map2_ map_ masked_fill masked_fill_ masked_scatter masked_scatter_ masked_select
    matrix_exp matrix_power maximum maxnreg median metadata minimum mm mode module module_load
    modules moveaxis movedim mro msort mtia multinomial multiply multiply_ mv mvlgamma mvlgamma_
    named_buffers named_children named_modules named_parameters names nan_to_num nan_to_num_ nanmean
    nanmedian nanquantile nansum narrow_copy ndimension ne ne_ neg neg_ negative negative_ nelement
    new new_empty_strided new_tensor newbyteorder nextafter nextafter_ noinline nonzero
    nonzero_static norm normal_ not_equal not_equal_ num num_reps num_warmups numerator numpy orgqr
    ormqr out_features outer output_nr params parse partition perf_model pin_memory pinverse
    polygamma polygamma_ popitem positive post_hook pow pow_ pre_hook pre_run_hooks preload prelu
    prod prune_configs put put_ q_per_channel_axis q_per_channel_scales q_per_channel_zero_points
    q_scale q_zero_point qr qscheme quantile rad2deg rad2deg_ random_ ravel raw_src real reciprocal
    reciprocal_ record_stream reduce reduce_or register_backward_hook register_forward_hook
    register_forward_pre_hook register_full_backward_hook register_full_backward_pre_hook
    register_hook register_load_state_dict_post_hook register_load_state_dict_pre_hook
    register_module register_post_accumulate_grad_hook register_state_dict_post_hook
    register_state_dict_pre_hook reinforce relu relu_ remainder remainder_ remove removeprefix
    removesuffix renorm renorm_ repeat repeat_interleave repr requires_grad_ reset_parameters
    reset_to_zero resize resize_ resize_as resize_as_ resize_as_sparse_ resolution resolve_conj
    resolve_neg restore_copies restore_value retain_grad retains_grad reverse rewrite rewriter
    rewritten_fn rfind rindex rjust roll rot90 round round_ row_indices rpartition rsplit rsqrt_
    rstrip run scalar scatter scatter_ scatter_add scatter_add_ scatter_reduce scatter_reduce_
    searchsorted seed select_scatter set_ set_attr set_extra_state set_offset set_state
    set_submodule setfield setflags sgn sgn_ share_memory share_memory_ short sigmoid_ sign sign_
    signature signbit sin sin_ sinc sinc_ sinh sinh_ slice_inverse slice_scatter slogdet
    smallest_normal smm solve sort sparse_dim sparse_mask sparse_resize_ sparse_resize_and_clear_
    split_with_sizes splitlines sqrt_ sqrt_rn square square_ squeeze_ src sspaddmm start
    starting_line_number state_dict std step stft stop storage storage_type str sub_ subdtype
    subtract subtract_ sum_to_size svd swapaxes swapaxes_ swapcase swapdims swapdims_ symeig
    symmetric_difference symmetric_difference_update t_ take take_along_dim tan tan_ tanh tanh_
    tensor_split tile tiny title to_bytes to_complex to_dense to_device to_empty to_ir to_mkldnn
    to_padded_tensor to_real to_sparse to_sparse_bsc to_sparse_bsr to_sparse_coo to_sparse_csc
    to_sparse_csr tobytes tofile tolist topk trace train translate transpose_ triangular_solve tril
    tril_ triu triu_ true_divide true_divide_ trunc trunc_ type_as unflatten unfold uniform_ union
    unique unique_consecutive unsafe_chunk unsafe_split unsafe_split_with_sizes unsqueeze_
    untyped_storage use_cuda_graph used_global_vals user_defined_post_hook user_defined_pre_hook var
    vdot version vsplit warmup where with_element_ty with_traceback xlogy xlogy_ xor_sum xpu
    zero_grad zfill
    """.split()
)


# The names (private ones too) whose value on one of those objects, or on the CPU interpreter's
# kernel and its rewriter, is code or leads to it: a method, a function, a module, a dict, a
# compiled object (not a number, string, tensor, dtype, device or size). A candidate may not define
# one of these in a class body or as ``self.x`` (``forward`` and the ``OBJECT_ATTRIBUTES`` excepted):
# a name it defines is readable on its own objects, and a method called with a foreign object as
# ``self`` would read that object's. Recomputed from the installed packages in the tests.
CODE_ATTRIBUTES: frozenset[str] = frozenset(
    """
    H KIND SIGNEDNESS T T_destination _addmm_activation _apply _autocast_to_full_precision
    _autocast_to_reduced_precision _backward_hooks _backward_pre_hooks _bench _buffers _call_hook
    _call_impl _clear_non_serializable_cached_data _coalesced_ _compile_and_exec _conj
    _conj_physical _determine_new_args _dimI _dimV _do_compile _dtensor__new__ _find_def
    _fix_weakref _flatten_ir _flatten_ir_types _forward_hooks _forward_hooks_always_called
    _forward_hooks_with_kwargs _forward_pre_hooks _forward_pre_hooks_with_kwargs _get_backward_hooks
    _get_backward_pre_hooks _get_jit_fn_file_line _get_name _get_src _hash_lock _indices
    _is_all_true _is_any_true _is_view _is_zerotensor _lazy_clone _load_from_state_dict
    _load_state_dict_post_hooks _load_state_dict_pre_hooks _make_subclass _make_substitution
    _make_wrapper_subclass _maybe_warn_non_full_backward_hook _modules _named_members _neg_view
    _nested_tensor_size _nested_tensor_storage_offsets _nested_tensor_strides _nnz
    _non_persistent_buffers_set _pack_args _parameters _philox_normal_ _philox_uniform_
    _prepare_source _reduce_ex_internal _register_load_state_dict_pre_hook _register_state_dict_hook
    _replicate_for_data_parallel _rev_view_func_unsafe _save_to_state_dict _set_name _set_src
    _slow_forward _sparse_mask_projection _state_dict_hooks _state_dict_pre_hooks _to_dense
    _to_sparse _to_sparse_bsc _to_sparse_bsr _to_sparse_csc _to_sparse_csr _transform_ast
    _typed_storage _unflatten_ir _unsafe_update_src _use_count _values _view_func _view_func_unsafe
    _wrapped_call_impl abs abs_ absolute absolute_ acos acos_ acosh acosh_ add add_ add_module
    add_note add_pre_run_hook addbmm addbmm_ addcdiv addcdiv_ addcmul addcmul_ addmm addmm_ addmv
    addmv_ addr addr_ adjoint advance all all_kwargs allclose amax amin aminmax angle any append
    apply apply_ arccos arccos_ arccosh arccosh_ arcsin arcsin_ arcsinh arcsinh_ arctan arctan2
    arctan2_ arctan_ arctanh arctanh_ argmax argmin argpartition argsort argwhere as_integer_ratio
    as_strided as_strided_ as_strided_scatter as_subclass asin asin_ asinh asinh_ associative_scan
    ast_transformer astype atan atan2 atan2_ atan_ atanh atanh_ atomic_add atomic_and atomic_cas
    atomic_load atomic_max atomic_min atomic_or atomic_poll atomic_store atomic_xchg atomic_xor attr
    backward baddbmm baddbmm_ base base_fn bernoulli bernoulli_ bfloat16 bincount bit_count
    bit_length bitwise_and bitwise_and_ bitwise_left_shift bitwise_left_shift_ bitwise_not
    bitwise_not_ bitwise_or bitwise_or_ bitwise_right_shift bitwise_right_shift_ bitwise_xor
    bitwise_xor_ bmm bool broadcast_to buffers byte byteswap cache capitalize casefold cast cauchy_
    ccol_indices cdiv cdouble ceil ceil_ center cfloat chalf char check_disk_cache children cholesky
    cholesky_inverse cholesky_solve choose chunk clamp clamp_ clamp_max clamp_max_ clamp_min
    clamp_min_ clear clip clip_ clone clone_state coalesce codegen_name col_indices compile compress
    configs conj conj_physical conj_physical_ conjugate const_data_ptr contiguous copy copy_
    copy_with copysign copysign_ corrcoef cos cos_ cosh cosh_ count count_nonzero cov cpu
    create_binder cross crow_indices ctypes cuda cummax cummin cumprod cumprod_ cumsum cumsum_ data
    data_ptr decode default default_factory deg2rad deg2rad_ dense_dim dequantize descr det detach
    detach_ device device_caches diag diag_embed diagflat diagonal diagonal_scatter diff difference
    difference_update digamma digamma_ dim dim_order discard dist div div_ divide divide_ do_bench
    dot double dsplit dtype dump dumps eig element_size element_ty encode endswith eq eq_ equal erf
    erf_ erfc erfc_ erfinv erfinv_ eval exp exp2 exp2_ exp_ expand expand_as expand_dims expandtabs
    expm1 expm1_ exponential_ extend extra_repr fill fill_ fill_diagonal_ find fix fix_ flags flat
    flatten flip fliplr flipud float float_power float_power_ floor floor_ floor_divide
    floor_divide_ fmax fmin fmod fmod_ fn format format_map forward frac frac_ frexp from_bytes
    fromhex fromkeys func gather gcd gcd_ ge ge_ geometric_ geqrf ger get get_block_shapes
    get_buffer get_capture_scope get_device get_element_ty get_extra_state get_int_max_value
    get_int_min_value get_offset get_parameter get_state get_submodule getfield graphsafe_get_state
    graphsafe_set_state greater greater_ greater_equal greater_equal_ gt gt_ half handle hardshrink
    hash_tensor heaviside heaviside_ hex histc histogram hsplit hypot hypot_ i0 i0_ igamma igamma_
    igammac igammac_ imag index index_add index_add_ index_copy index_copy_ index_fill index_fill_
    index_put index_put_ index_reduce index_reduce_ index_select indices initial_seed inner insert
    int int_repr intersection intersection_update inverse ipu is_bf16 is_block is_bool is_coalesced
    is_complex is_conj is_const is_contiguous is_distributed is_dtype is_floating is_floating_point
    is_fp16 is_fp32 is_fp64 is_fp8 is_fp8e4b15 is_fp8e4b8 is_fp8e4nv is_fp8e5 is_fp8e5b16 is_gluon
    is_inference is_int is_int1 is_int16 is_int32 is_int64 is_int8 is_int_signed is_int_unsigned
    is_integer is_neg is_nonzero is_pinned is_ptr is_same_size is_set_to is_shared is_signed
    is_standard_floating is_uint16 is_uint32 is_uint64 is_uint8 is_void isalnum isalpha isascii
    isclose isdecimal isdigit isdisjoint isfinite isidentifier isinf islower isnan isneginf
    isnumeric isposinf isprintable isreal isspace issubset issuperset istft istitle isupper item
    items itemsize join keys keywords kind kron kthvalue kw_only kwargs layout lcm lcm_ ldexp ldexp_
    le le_ lerp lerp_ less less_ less_equal less_equal_ lgamma lgamma_ ljust load_state_dict log
    log10 log10_ log1p log1p_ log2 log2_ log_ log_normal_ log_softmax logaddexp logaddexp2
    logcumsumexp logdet logical_and logical_and_ logical_not logical_not_ logical_or logical_or_
    logical_xor logical_xor_ logit logit_ logsumexp long lower lstrip lstsq lt lt_ lu lu_solve mH mT
    maketrans mangle manual_seed map2_ map_ masked_fill masked_fill_ masked_scatter masked_scatter_
    masked_select matmul matrix_exp matrix_power max maximum mean median metadata min minimum mm
    mode module_load modules moveaxis movedim mro msort mtia mul mul_ multinomial multiply multiply_
    mv mvlgamma mvlgamma_ named_buffers named_children named_modules named_parameters nan_to_num
    nan_to_num_ nanmean nanmedian nanquantile nansum narrow narrow_copy nbytes ndim ndimension ne
    ne_ neg neg_ negative negative_ nelement new new_empty new_empty_strided new_full new_ones
    new_tensor new_zeros newbyteorder nextafter nextafter_ nonzero nonzero_static norm normal_
    not_equal not_equal_ numel numpy orgqr ormqr outer parameters params parse partition permute
    pin_memory pinverse polygamma polygamma_ pop popitem positive post_hook pow pow_ pre_hook
    preload prelu prod prune_configs put put_ q_per_channel_axis q_per_channel_scales
    q_per_channel_zero_points q_scale q_zero_point qr qscheme quantile rad2deg rad2deg_ random_
    ravel real reciprocal reciprocal_ record_stream reduce reduce_or register_backward_hook
    register_buffer register_forward_hook register_forward_pre_hook register_full_backward_hook
    register_full_backward_pre_hook register_hook register_load_state_dict_post_hook
    register_load_state_dict_pre_hook register_module register_parameter
    register_post_accumulate_grad_hook register_state_dict_post_hook register_state_dict_pre_hook
    reinforce relu relu_ remainder remainder_ remove removeprefix removesuffix renorm renorm_ repeat
    repeat_interleave replace repr requires_grad_ reset_parameters reshape reshape_as resize resize_
    resize_as resize_as_ resize_as_sparse_ resolve_conj resolve_neg restore_copies retain_grad
    reverse rewrite rewrite_ast rewriter rewritten_fn rfind rindex rjust roll rot90 round round_
    row_indices rpartition rsplit rsqrt rsqrt_ rstrip run scalar scatter scatter_ scatter_add
    scatter_add_ scatter_reduce scatter_reduce_ searchsorted seed select select_scatter set_
    set_attr set_extra_state set_offset set_state set_submodule setdefault setfield setflags sgn
    sgn_ shape share_memory share_memory_ short sigmoid sigmoid_ sign sign_ signature signbit sin
    sin_ sinc sinc_ sinh sinh_ size slice_inverse slice_scatter slogdet smm softmax solve sort
    sparse_dim sparse_mask sparse_resize_ sparse_resize_and_clear_ split split_with_sizes splitlines
    sqrt sqrt_ sqrt_rn square square_ squeeze squeeze_ sspaddmm startswith state_dict std stft
    storage storage_offset storage_type store stride strides strip sub sub_ subtract subtract_ sum
    sum_to_size svd swapaxes swapaxes_ swapcase swapdims swapdims_ symeig symmetric_difference
    symmetric_difference_update t t_ take take_along_dim tan tan_ tanh tanh_ tensor_split tile title
    to to_bytes to_complex to_dense to_device to_empty to_ir to_mkldnn to_padded_tensor to_real
    to_sparse to_sparse_bsc to_sparse_bsr to_sparse_coo to_sparse_csc to_sparse_csr tobytes tofile
    tolist topk trace train trans translate transpose transpose_ triangular_solve tril tril_ triu
    triu_ true_divide true_divide_ trunc trunc_ type type_as unbind unflatten unfold uniform_ union
    unique unique_consecutive unsafe_chunk unsafe_split unsafe_split_with_sizes unsqueeze unsqueeze_
    untyped_storage update upper used_global_vals values var vdot view view_as vsplit warmup where
    with_element_ty with_traceback xlogy xlogy_ xor_sum xpu zero_ zero_grad zfill
    """.split()
)

__all__ = ["CODE_ATTRIBUTES", "FOREIGN_ATTRIBUTES"]
