// model config: being written
