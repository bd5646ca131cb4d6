"""The pytest faces: controller and worker roles, and the pure verdict."""
