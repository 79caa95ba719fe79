"""The keys TRL's GRPOConfig and ModelConfig add to a recipe, for the installed TRL version below: `prosfi train`
checks a recipe's keys against them (`prosfi.train.fastcheck`) before importing the training stack, so a typo costs
a fraction of a second, not the 7-33 s of importing TRL. Regenerate with `python -m prosfi.train.trl_keys` after
a TRL upgrade (tests/test_train_fastcheck.py compares this list with the live parser where TRL is installed);
with another TRL installed the quick key check is skipped and the full one (after the imports) decides."""

from __future__ import annotations

TRL_VERSION = '1.16.0'

TRL_KEYS = frozenset({
    'accelerator_config', 'activation_checkpointing', 'activation_checkpointing_kwargs', 'adam_beta1',
    'adam_beta2', 'adam_epsilon', 'attn_implementation', 'auto_find_batch_size',
    'average_tokens_across_devices', 'batch_eval_metrics', 'beta', 'bf16', 'bf16_full_eval',
    'bnb_4bit_quant_storage', 'bnb_4bit_quant_type', 'cache_implementation', 'cast_lm_head_to_fp32',
    'chat_template_kwargs', 'data_seed', 'dataloader_drop_last', 'dataloader_in_order',
    'dataloader_multiprocessing_context', 'dataloader_num_workers', 'dataloader_persistent_workers',
    'dataloader_pin_memory', 'dataloader_prefetch_factor', 'ddp_backend', 'ddp_broadcast_buffers',
    'ddp_bucket_cap_mb', 'ddp_find_unused_parameters', 'ddp_static_graph', 'ddp_timeout', 'debug', 'deepspeed',
    'delta', 'disable_dropout', 'disable_tqdm', 'do_eval', 'do_predict', 'do_train',
    'ds3_gather_for_generation', 'dtype', 'enable_jit_checkpoint', 'entropy_coef', 'entropy_coef_delta',
    'entropy_coef_max', 'entropy_coef_min', 'entropy_target', 'epsilon', 'epsilon_high',
    'eval_accumulation_steps', 'eval_delay', 'eval_do_concat_batches', 'eval_on_start', 'eval_steps',
    'eval_strategy', 'eval_use_gather_object', 'fp16', 'fp16_full_eval', 'fsdp', 'fsdp_config',
    'full_determinism', 'generation_batch_size', 'generation_kwargs', 'gradient_accumulation_steps',
    'gradient_checkpointing', 'gradient_checkpointing_kwargs', 'greater_is_better', 'hub_always_push',
    'hub_model_id', 'hub_private_repo', 'hub_revision', 'hub_strategy', 'hub_token', 'ignore_data_skip',
    'importance_sampling_level', 'include_for_metrics', 'include_num_input_tokens_seen', 'label_names',
    'label_smoothing_factor', 'learning_rate', 'length_column_name', 'liger_kernel_config',
    'load_best_model_at_end', 'load_in_4bit', 'load_in_8bit', 'local_rank', 'log_completions',
    'log_completions_hub_repo', 'log_level', 'log_level_replica', 'log_multimodal', 'log_on_each_node',
    'log_unique_prompts', 'logging_first_step', 'logging_nan_inf_filter', 'logging_steps', 'logging_strategy',
    'lora_alpha', 'lora_dropout', 'lora_modules_to_save', 'lora_r', 'lora_target_modules',
    'lora_target_parameters', 'lora_task_type', 'loss_type', 'lr_scheduler_kwargs', 'lr_scheduler_type',
    'mask_truncated_completions', 'max_completion_length', 'max_grad_norm', 'max_steps',
    'max_tool_calling_iterations', 'metric_for_best_model', 'min_p', 'model_init_kwargs', 'model_name_or_path',
    'model_revision', 'multi_objective_aggregation', 'neftune_noise_alpha', 'no_average_tokens_across_devices',
    'no_dataloader_in_order', 'no_dataloader_pin_memory', 'no_ds3_gather_for_generation',
    'no_eval_do_concat_batches', 'no_gradient_checkpointing', 'no_log_multimodal', 'no_log_on_each_node',
    'no_logging_nan_inf_filter', 'no_shuffle_dataset', 'no_skip_memory_metrics', 'no_use_bias_correction_kl',
    'no_vllm_importance_sampling_correction', 'num_completions_to_print', 'num_generations',
    'num_generations_eval', 'num_iterations', 'num_train_epochs', 'off_policy_mask_threshold', 'optim',
    'optim_args', 'optim_target_modules', 'output_dir', 'pad_to_multiple_of', 'parallelism_config',
    'per_device_eval_batch_size', 'per_device_train_batch_size', 'prediction_loss_only', 'project',
    'push_to_hub', 'ref_model_mixup_alpha', 'ref_model_sync_steps', 'remove_unused_columns',
    'repetition_penalty', 'report_to', 'restore_callback_states_from_checkpoint', 'resume_from_checkpoint',
    'reward_weights', 'router_aux_loss_coef', 'run_name', 'sapo_temperature_neg', 'sapo_temperature_pos',
    'save_on_each_node', 'save_only_model', 'save_steps', 'save_strategy', 'save_total_limit', 'scale_rewards',
    'seed', 'shuffle_dataset', 'skip_memory_metrics', 'steps_per_generation', 'sync_ref_model', 'temperature',
    'tf32', 'top_entropy_quantile', 'top_k', 'top_p', 'torch_compile', 'torch_compile_backend',
    'torch_compile_mode', 'torch_empty_cache_steps', 'trackio_bucket_id', 'trackio_space_id',
    'trackio_static_space_id', 'train_sampling_strategy', 'transformers_continuous_batching_config',
    'trust_remote_code', 'use_adaptive_entropy', 'use_bias_correction_kl', 'use_bnb_nested_quant', 'use_cache',
    'use_cpu', 'use_dora', 'use_liger_kernel', 'use_peft', 'use_rslora', 'use_transformers_continuous_batching',
    'use_transformers_paged', 'use_vllm', 'vespo_k_neg', 'vespo_k_pos', 'vespo_lambda_neg', 'vespo_lambda_pos',
    'vllm_enable_sleep_mode', 'vllm_gpu_memory_utilization', 'vllm_group_port', 'vllm_importance_sampling_cap',
    'vllm_importance_sampling_clip_max', 'vllm_importance_sampling_clip_min',
    'vllm_importance_sampling_correction', 'vllm_importance_sampling_mode', 'vllm_max_model_length',
    'vllm_mode', 'vllm_model_impl', 'vllm_server_base_url', 'vllm_server_host', 'vllm_server_port',
    'vllm_server_timeout', 'vllm_structured_outputs_regex', 'vllm_tensor_parallel_size', 'warmup_steps',
    'weight_decay'
})


def _generate() -> list[str]:  # pragma: no cover - a maintainer's tool
    from trl import GRPOConfig, ModelConfig, TrlParser

    from prosfi.train.recipe import parser_dests, parser_flags

    parser = TrlParser((GRPOConfig, ModelConfig), allow_abbrev=False)
    return sorted(set(parser_dests(parser)) | set(parser_flags(parser)))


if __name__ == "__main__":  # pragma: no cover
    import trl

    print(f"TRL {trl.__version__}: {len(_generate())} keys; paste into TRL_KEYS:")
    print(", ".join(repr(k) for k in _generate()))
