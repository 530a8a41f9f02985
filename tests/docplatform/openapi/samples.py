"""OpenAPI documents the tests publish: a 3.1 one in YAML (references, a cycle, examples and a
script in a description), a 3.0 one in JSON and a Swagger 2.0 one."""

import json

PETSTORE_31 = """\
openapi: 3.1.0
info:
  title: Pet store
  version: "2.1"
paths:
  /pets/{petId}:
    parameters:
      - $ref: "#/components/parameters/PetId"
    get:
      operationId: getPet
      summary: Fetch one pet
      description: "Returns the pet. <script>alert('owned')</script>"
      parameters:
        - name: fields
          in: query
          description: Which fields to return
          schema: {type: string}
      responses:
        "200":
          description: The pet
          content:
            application/json:
              schema: {$ref: "#/components/schemas/Pet"}
              example: {id: 7, name: Rex, tag: dog}
        "404":
          description: No such pet
  /pets:
    post:
      operationId: createPet
      summary: Add a pet
      requestBody:
        required: true
        content:
          application/json:
            schema: {$ref: "#/components/schemas/Pet"}
      responses:
        "201":
          description: Created
components:
  parameters:
    PetId:
      name: petId
      in: path
      required: true
      description: The pet's id
      schema: {type: integer, format: int64}
  schemas:
    Pet:
      type: object
      required: [id, name]
      properties:
        id: {type: integer, format: int64}
        name: {type: string, description: "<img src=x onerror=alert(1)>"}
        tag: {type: string}
        parent: {$ref: "#/components/schemas/Pet"}
"""

PETSTORE_30 = json.dumps(
    {
        "openapi": "3.0.3",
        "info": {"title": "Pets 3.0", "version": "1"},
        "paths": {
            "/pets": {
                "get": {
                    "operationId": "listPets",
                    "summary": "List pets",
                    "responses": {"200": {"description": "Pets"}},
                }
            }
        },
    }
)

PETSTORE_20 = json.dumps(
    {
        "swagger": "2.0",
        "info": {"title": "Pets 2.0", "version": "1"},
        "basePath": "/v1",
        "paths": {
            "/pets": {
                "get": {
                    "operationId": "listPets",
                    "summary": "List pets",
                    "parameters": [
                        {"name": "limit", "in": "query", "type": "integer", "required": False}
                    ],
                    "responses": {
                        "200": {
                            "description": "Pets",
                            "schema": {"type": "array", "items": {"$ref": "#/definitions/Pet"}},
                        }
                    },
                }
            }
        },
        "definitions": {"Pet": {"type": "object", "properties": {"name": {"type": "string"}}}},
    }
)

#: "version" missing from info: the validator says so at ``info``.
WITHOUT_VERSION = json.dumps({"openapi": "3.0.3", "info": {"title": "x"}, "paths": {}})
