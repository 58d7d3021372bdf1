"""Prompted causal language models as classifiers: the prompt, verbaliser and calibration
(`prompting`), loading local models and the packaged SmolLM2 (`loading`), the key/value cache
reuse of shared prefixes (`prefix`), the scoring module (`scoring`) and the classifier
(`classifier`)."""
