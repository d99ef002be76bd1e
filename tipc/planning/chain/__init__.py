"""The dialects' step builders: a dialect profile interpreted over a typed config, the steps
`test_train_inference_python.sh` would run (gpu list -> autocast -> trainer -> train/eval/export/inference
loops, whole_infer branches), reproducing the bash semantics that change commands and recording each such
semantic as a Finding. Pure: no file is read or written here.

Modules, each importing only those before it: `context` (the state the builders add to), `loop_items` (one
gpu_list item, autocast value, trainer name), `infer` (the inference loops and their skip rules), `export`,
`train` (the train modes), `whole_infer`, `compact` (the 32-line engine), `builder` (`build`, `lint_build`).
"""
