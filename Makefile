# Course tasks. The two everyday commands are `make lab` and `make test`;
# both create the virtual environment .venv on first use and reuse it afterwards.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# torch is installed first, on its own, so that `pip install -e .` finds it satisfied.
# Override for your machine, e.g. a CPU-only build from PyTorch's index:
#   make test TORCH_SPEC="torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu"
TORCH_SPEC ?= torch==2.13.0
STAMP := $(VENV)/.installed
LAB_ARGS ?=
# Jupyter refuses to run as root (containers, CI) unless told to.
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root)
PYTEST_ARGS ?=
# pytest-xdist workers; --dist loadfile keeps each notebook's cells in one worker (one kernel).
WORKERS ?= 2
NBVAL := --nbval --nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg

.PHONY: setup lab test lint format notebooks exercises slides site bench progress mutants grade clean cuda-check

setup: $(STAMP)

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 10))' \
		|| { echo "Python 3.10 or newer is needed; run e.g. make PYTHON=python3.11"; exit 1; }
	@echo "Setting up $(VENV) (only when pyproject.toml changed; the first time takes a few minutes)"
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet $(TORCH_SPEC)
	$(BIN)/python -m pip install --quiet -e ".[course,dev]"
	touch $(STAMP)

# The pre-save hook keeps the Python version JupyterLab copies from the kernel out of the
# notebooks, so opening and closing one changes nothing on disk (tests/test_lab_opens_unchanged.py).
lab: $(STAMP)
	$(BIN)/jupyter lab $(ROOT_FLAG) --ServerApp.root_dir=. --LabApp.app_settings_dir=course/lab_settings \
		--ContentsManager.pre_save_hook=course.lab_settings.save_hook.keep_language_info \
		--LabApp.default_url=/lab/tree/notebooks/00_welcome.ipynb $(LAB_ARGS)

test: $(STAMP) lint
	$(BIN)/python -m pytest -n $(WORKERS) --dist loadfile -q $(NBVAL) $(PYTEST_ARGS) tests notebooks solutions

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

notebooks: $(STAMP)
	$(BIN)/python -m course.execute

exercises: $(STAMP)
	$(BIN)/python -m course.build_exercises

# reveal.js decks of the chapters in build/slides/, and the course as a web site in build/site/;
# the first run fetches reveal.js and MathJax with npm into build/vendor/.
slides: $(STAMP)
	$(BIN)/python -m course.slides

site: $(STAMP)
	$(BIN)/python -m course.site

# mini_autograd against torch on the CPU, then beside the other engines installed by
# `.venv/bin/pip install -e ".[bench]"`; prints the tables, writes benchmarks/results/latest.md.
bench: $(STAMP)
	$(BIN)/python -m benchmarks.run

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis

# The build track: every exercise of your engine, exercises/my_autograd.py, checked against PyTorch.
progress: $(STAMP)
	$(BIN)/python -m course.track

# Mutation testing: each build-track piece's check, then each notebook exercise's, against wrong
# versions of its answer.
mutants: $(STAMP)
	$(BIN)/python -W ignore::SyntaxWarning -m course.mutants
	$(BIN)/python -W ignore::SyntaxWarning -m course.mutants --notebooks

# Grading: SUBMISSIONS holds one folder per learner (her exercise notebooks and my_autograd.py);
# writes build/grading/grades.md and grades.csv. Options: GRADE_ARGS="--timeout 600 --out DIR".
grade: $(STAMP)
	$(BIN)/python -m course.grade "$(SUBMISSIONS)" $(GRADE_ARGS)

# With an NVIDIA GPU: CUDA tests, chapters' CUDA cells, doctor, memory plot -> build/cuda-report/.
cuda-check: $(STAMP)
	$(BIN)/python -m course.cuda_check
