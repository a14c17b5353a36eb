"""Running an evaluation: config to plan, evaluator, engines, runner, outputs, workflow configs."""
